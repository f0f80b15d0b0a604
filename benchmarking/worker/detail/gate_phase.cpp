// The gate: every check of the request (a case with a seed), its outputs into the outputs file
// for the parent to judge, and what the kernels did beside them: canaries, inputs, and repeated
// runs on the same inputs.
#include <fmt/format.h>

#include "benchmarking/candidate/kernel_binding.hpp"
#include "benchmarking/worker/detail/check_buffers.hpp"
#include "benchmarking/worker/detail/phase_handler.hpp"
#include "benchmarking/worker/detail/result_channel.hpp"
#include "core/sha256.hpp"

namespace blaster::worker {
namespace {

check_evidence run_check(worker_context& w, std::size_t index) {
  const gate_check& check = w.request.checks[index];
  const task_case& c = w.task.find_case(check.case_name);
  send_step("resolve", index);
  const resolved_plan plan = resolve_plan(*w.candidate.plan, *w.variant, w.task, c);
  check_device_limits(plan, *w.variant, w.context.properties(), w.candidate.file.string());
  send_step("allocate", index);
  check_buffers buffers = allocate_check(w, check, plan);
  poison(w, buffers);
  settle(w);
  const launch_sequence launches(plan, *w.module, buffers.pointers);

  check_evidence evidence{.check = index, .case_name = check.case_name, .seed = check.seed};
  const int runs = check.repeat ? w.request.determinism_runs : 1;
  for (int run = 0; run < runs; ++run) {
    if (run > 0) {
      poison(w, buffers);
      settle(w);
    }
    send_step(fmt::format("run {}", run + 1), index);
    launches.enqueue(w.stream.get());
    w.stream.synchronize();
    send_step("download", index);
    for (const auto& slot : check.outputs) {
      const auto checked = w.outputs->slice(slot.offset, slot.bytes);
      if (run == 0) {
        buffers.buffers.at(slot.buffer).download(checked);
        continue;
      }
      const std::span<std::byte> again = w.host_bytes(slot.bytes);
      buffers.buffers.at(slot.buffer).download(again);
      if (auto d = compare_bytes(checked, again, w.width_of(slot.buffer));
          d && !evidence.nondeterministic) {
        evidence.nondeterministic = run_difference{.buffer = slot.buffer,
                                                   .run = run + 1,
                                                   .first_index = d->first,
                                                   .differing_elements = d->count};
      }
    }
  }
  evidence.runs = runs;

  // What the kernels left outside their outputs, after every run.
  send_step("inspect", index);
  evidence.canaries = changed_canaries(w, buffers);
  for (const auto& slot : check.inputs) {
    if (w.task.find_buffer(slot.buffer)->role == buffer_role::inout) continue;  // it is an output
    const auto uploaded = w.inputs->slice(slot.offset, slot.bytes);
    const std::span<std::byte> now = w.host_bytes(slot.bytes);
    buffers.buffers.at(slot.buffer).download(now);
    // Compared bit for bit; the digest after is computed only when it differs from before.
    input_check entry{
        .buffer = slot.buffer, .sha256_before = slot.sha256, .sha256_after = slot.sha256};
    if (auto d = compare_bytes(uploaded, now, w.width_of(slot.buffer))) {
      entry.sha256_after = sha256_hex(std::span<const std::byte>(now));
      entry.first_index = d->first;
      entry.differing_elements = d->count;
    }
    evidence.inputs.push_back(std::move(entry));
  }
  return evidence;
}

class gate_handler final : public phase_handler {
  void do_run(worker_context& w, worker_result& result,
              std::optional<std::size_t>& current) const override {
    for (std::size_t i = 0; i < w.request.checks.size(); ++i) {
      current = i;
      result.checks.push_back(run_check(w, i));
    }
  }
};

}  // namespace

const phase_handler& gate_phase() {
  static const gate_handler handler;
  return handler;
}

}  // namespace blaster::worker
