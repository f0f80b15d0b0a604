// The timing of one check's inputs, and the checks that the timed launches did the work: their
// outputs against the output the gate checked, their device time on freshly poisoned outputs
// against the time on outputs that already hold the answer, and launches on the case's other
// draws against what the gate gave there and against the timed draw's time.
#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "benchmarking/candidate/kernel_binding.hpp"
#include "benchmarking/timing/buffer_copy.hpp"
#include "benchmarking/timing/device_compare.hpp"
#include "benchmarking/timing/kernel_timer.hpp"
#include "benchmarking/timing/l2_flush.hpp"
#include "benchmarking/timing/pattern_fill.hpp"
#include "benchmarking/timing/sm_clock_probe.hpp"
#include "benchmarking/timing/stream_hold.hpp"
#include "benchmarking/worker/detail/check_buffers.hpp"
#include "benchmarking/worker/detail/dependence_pairs.hpp"
#include "benchmarking/worker/detail/launch_timer.hpp"
#include "benchmarking/worker/detail/phase_handler.hpp"
#include "benchmarking/worker/detail/result_channel.hpp"
#include "core/device_buffer.hpp"
#include "core/sha256.hpp"
#include "profiling/kernel_activity.hpp"

namespace blaster::worker {
namespace {

// Which kernels CUPTI saw and how often, and how they differ from the plan's, if they do.
void account(const kernel_recorder& recorder, const resolved_plan& plan, timing_samples& t) {
  cupti_account& a = t.cupti;
  if (a.runs == 0) {
    a.error = "CUPTI is unavailable (" + recorder.unavailable() + "): nothing was recorded";
    return;
  }
  const std::map<std::string, int>& seen = recorder.seen();
  std::map<std::string, int> expected;
  for (const auto& l : plan.launches) expected[l.lowered] += a.runs;
  int executions = 0;
  for (const auto& [name, count] : seen) {
    a.kernels.push_back(
        {.kernel = name, .count = count, .us = recorder.seen_us().at(name) / a.runs});
    executions += count;
  }
  a.matches_plan = seen == expected;
  // Kernels cannot take longer on the device than the events around them; the bound allows
  // for the two clocks' granularity.
  if (!a.matches_plan) {
    a.error = fmt::format(
        "CUPTI saw {} kernel executions of {} names; the plan launches {} kernels {} times",
        executions, seen.size(), expected.size(), a.runs);
  } else if (a.kernel_us > a.event_us * 1.02 + 0.5) {
    a.error = fmt::format(
        "the kernels took {:.2f} us on the device but the events around them only {:.2f} us",
        a.kernel_us, a.event_us);
  }
}

// How many buffer sets a rotating timing needs so that the sets of one sample span twice the
// L2: a launch then finds none of its inputs left in the cache by the launches before it. The
// task's buffers alone count: scratch a candidate declares and never touches would otherwise
// shrink the rotation to one set and leave its inputs in the L2.
int rotation_copies(const check_buffers& one, std::int64_t l2_bytes) {
  const std::size_t bytes = footprint_bytes(one);
  const auto wanted =
      (2 * static_cast<std::size_t>(l2_bytes) + bytes - 1) / std::max<std::size_t>(bytes, 1);
  // Beyond this the sets are tiny and launches dominate; and each buffer maps at least one
  // allocation granule of its own.
  constexpr std::size_t most = 256;
  return static_cast<int>(std::clamp<std::size_t>(wanted, 1, most));
}

// Launches on the timed check's inputs uploaded again before each, to time the unseen ones against.
constexpr int seen_launches = 3;

// Launches on inputs the kernel has not been timed on, each the last of a run of launches queued
// behind a hold of the stream, so that they run back to back as a timing's do: a kernel keeping
// a shortcut for launches in a run takes it here too. Each other draw of the case meets two runs:
//  - in place: launches of the timed draw on the timed buffers, then the other draw copied over
//    their inputs on the device, then the launch: the same buffers as the launch before it,
//    a copy's time later;
//  - elsewhere: the other draw uploaded to the timed buffers and poisoned, then launches of the
//    timed draw on a set of their own, then the launch; the timed draw itself, uploaded the same
//    way, is timed against it (seen).
// A kernel that keeps what it derived from its inputs, keyed by anything but their values (an
// address, a launch count, the time since its last launch, the buffers its last launch used,
// the state of the caches), answers an unseen draw from what it kept of the timed one: its
// outputs' digests differ from those of the gate's run of that draw. One that keys by their
// values does the work again there, and is slower. Every launch of a run follows what the mode
// puts before each launch of a sample: the outputs poisoned, where the mode poisons before every
// launch (a kernel that skips its work on written outputs finds poison here as it does there),
// then `flush`, where the mode flushes the L2. It leaves `set` another draw's.
void time_unseen_inputs(worker_context& w, const resolved_plan& plan,
                        const timing_mode_traits& mode, const enqueue_fn& flush,
                        const pattern_fill& fill, const stream_hold& hold, const gate_check& timed,
                        check_buffers& set, const launch_sequence& launch,
                        kernel_recorder& recorder, timing_checks& checks) {
  std::vector<std::size_t> others;
  for (std::size_t k = 0; k < w.request.checks.size(); ++k) {
    const gate_check& c = w.request.checks[k];
    if (c.case_name == timed.case_name && &c != &timed) others.push_back(k);
  }
  if (others.empty()) return;
  send_step("unseen inputs");
  auto load = [&](const gate_check& c) {
    assign_inputs(w, c, set);
    poison(w, set, fill);
    settle(w);
  };
  check_buffers runway_set = allocate_check(w, timed, plan);
  poison(w, runway_set);
  const launch_sequence runway(plan, *w.module, runway_set.pointers);
  settle(w);
  enqueue_fn each;
  if (mode.checks_every_sample || flush) {
    each = [&](CUstream s) {
      if (mode.checks_every_sample) {
        poison_outputs(w, set, fill, s);
        poison_outputs(w, runway_set, fill, s);
      }
      if (flush) flush(s);
    };
  }
  launch_timer timer(w, recorder, launch.size());
  const bool as_graph = mode.replays_graph && timer.recorded();
  const launch_run elsewhere(w.stream, runway, {}, launch, each, as_graph);
  unseen_inputs u{.source = timer.source()};
  // Do the outputs of the last launch, on `other` (check k), have the gate's digests?
  auto compare = [&](std::size_t k, std::string_view how) {
    const gate_check& other = w.request.checks[k];
    const auto gated = w.request.other_draws_sha256.find(k);
    if (gated == w.request.other_draws_sha256.end()) return;  // nothing to compare with
    for (std::size_t o = 0; o < other.outputs.size() && o < gated->second.size(); ++o) {
      const buffer_slot& slot = other.outputs[o];
      const std::span<std::byte> bytes = w.host_bytes(slot.bytes);
      set.buffers.at(slot.buffer).download(bytes);
      if (piecewise_sha256_hex(bytes) != gated->second[o]) {
        u.differing.push_back(
            fmt::format("{} on the draw of seed {:#x} {}", slot.buffer, other.seed, how));
      }
    }
  };
  for (int i = 0; i < seen_launches; ++i) {
    load(timed);
    u.seen_us.push_back(timer.after(hold, elsewhere));
  }
  for (const std::size_t k : others) {
    const gate_check& other = w.request.checks[k];
    std::vector<cuda::device_buffer> staged;
    for (const auto& slot : other.inputs) {
      staged.emplace_back(slot.bytes);
      staged.back().upload_async(w.inputs->slice(slot.offset, slot.bytes), w.stream.get());
    }
    load(timed);
    const launch_run in_place(
        w.stream, launch,
        [&](CUstream s) {
          for (std::size_t i = 0; i < staged.size(); ++i)
            staged[i].copy_to_async(set.buffers.at(other.inputs[i].buffer).data(), s);
        },
        launch, each, as_graph);
    u.in_place_us.push_back(timer.after(hold, in_place));
    compare(k, "in place");
    load(other);
    u.unseen_us.push_back(timer.after(hold, elsewhere));
    compare(k, "after launches elsewhere");
  }
  checks.unseen = std::move(u);
}

timing_answer run_timing(worker_context& w) {
  const std::size_t index = w.request.timed_check;
  const gate_check& check = w.request.checks.at(index);
  const task_case& c = w.task.find_case(check.case_name);
  const resolved_plan plan = resolve_plan(*w.candidate.plan, *w.variant, w.task, c);
  const auto& device = w.context.properties();
  const timing_mode_traits& mode = traits_of(w.request.timing.mode);
  std::vector<check_buffers> sets;
  sets.push_back(allocate_check(w, check, plan));
  const bool rotate = w.request.timing.rotate_buffers && mode.rotates_buffers;
  const int copies = rotate ? rotation_copies(sets.front(), device.l2_bytes) : 1;
  while (static_cast<int>(sets.size()) < copies) sets.push_back(allocate_check(w, check, plan));
  std::vector<launch_sequence> launches;
  for (auto& set : sets) {
    poison(w, set);
    launches.emplace_back(plan, *w.module, set.pointers);
  }
  settle(w);
  auto enqueue = [&](CUstream s, int i) {
    launches[static_cast<std::size_t>(i) % sets.size()].enqueue(s);
  };

  // The output the gate checked goes to the device once; each stale check compares there, so a
  // case of gigabytes costs milliseconds per check rather than a download and a host pass.
  device_compare compare(w.request.arch, &*w.cache);
  std::map<std::string, cuda::device_buffer, std::less<>> gated;
  for (const auto& slot : check.outputs) {
    auto [it, inserted] = gated.try_emplace(slot.buffer, slot.bytes);
    it->second.upload_async(w.outputs->slice(slot.offset - w.request.outputs_base, slot.bytes),
                            w.stream.get());
  }
  settle(w);

  // Does the last launch on set k reproduce the output the gate checked?
  auto stale_set = [&](std::size_t k) -> std::optional<stale_output> {
    for (const auto& slot : check.outputs) {
      if (auto d = compare(sets[k].buffers.at(slot.buffer).data(), gated.at(slot.buffer).get(),
                           slot.bytes, w.width_of(slot.buffer), w.stream)) {
        return stale_output{.buffer = slot.buffer,
                            .buffer_copy = k,
                            .first_index = d->first,
                            .differing_elements = d->count};
      }
    }
    return std::nullopt;
  };
  // ... and on each of the first `used` sets?
  auto stale = [&](std::size_t used) -> std::optional<stale_output> {
    for (std::size_t k = 0; k < std::min(used, sets.size()); ++k) {
      if (auto d = stale_set(k)) return d;
    }
    return std::nullopt;
  };
  auto poison_all = [&] {
    for (auto& set : sets) poison(w, set);
  };
  // A mode that checks every sample poisons the outputs before every launch and checks every
  // launch's output: a single launch has nothing of its own to find there. The others check one
  // sample, drawn from a seed the kernel cannot see, among the samples that always run (the budget
  // may stop the rest); its outputs are poisoned first, outside the timed region, so that only its
  // own launches can fill them.
  timing_checks checks{.spot_every_sample = mode.checks_every_sample};
  const int always =
      std::max(1, std::min(w.request.timing.max_samples, w.request.timing.min_samples));
  const int spot_sample =
      checks.spot_every_sample
          ? 0
          : static_cast<int>(w.request.spot_seed % static_cast<std::uint64_t>(always));
  int spot_failed_sample = -1;
  const spot_check spot{.sample = spot_sample,
                        .every_sample = checks.spot_every_sample,
                        .before = poison_all,
                        .after = [&](int inner) {
                          ++checks.checked_samples;
                          if (checks.spot_stale) return;
                          checks.spot_stale = stale(static_cast<std::size_t>(inner));
                          if (checks.spot_stale) spot_failed_sample = checks.checked_samples - 1;
                        }};
  std::optional<l2_flush> flush;
  if (mode.flushes_l2) flush.emplace(device.l2_bytes, w.request.arch, &*w.cache);
  const sm_clock_probe clock(w.request.arch, &*w.cache);
  kernel_recorder recorder(
      {std::string(sm_clock_probe::kernel_name), std::string(l2_flush::kernel_name),
       std::string(device_compare::kernel_name), std::string(pattern_fill::kernel_name),
       std::string(buffer_copy::kernel_name), std::string(stream_hold::kernel_name)});
  // The harness's kernels of the checks after the samples, which the recorder leaves out.
  const pattern_fill fill(w.request.arch, &*w.cache);
  const buffer_copy copy(w.request.arch, &*w.cache);
  const stream_hold hold(w.request.arch, &*w.cache);
  enqueue_fn flush_l2;
  if (flush) flush_l2 = [&](CUstream s) { (*flush)(s); };
  timing_environment environment{.flush_l2 = flush_l2,
                                 .clock = &clock,
                                 .rated_clock_mhz = device.sm_clock_khz / 1000.0,
                                 .record = {},
                                 .recorded_us = {}};
  record_through(recorder, environment);
  send_step("timing");
  timing_samples timing = time_kernel(enqueue, w.stream, w.request.timing, environment, &spot);
  timing.buffer_copies = copies;
  account(recorder, plan, timing);
  checks.spot_sample = checks.spot_every_sample ? spot_failed_sample : spot_sample;

  // Pairs of launches whose sides differ in one thing only (dependence_pairs.hpp).
  if (mode.checks_output_dependence) {
    send_step("poisoned launches");
    checks.poisoned =
        time_dependence_pairs(w, sets, launches, plan.launches.size(), timing.cupti.kernel_us,
                              recorder, fill, copy, hold, stale_set, checks.poisoned_stale);
  }
  // And once more after the last sample, one launch on poisoned outputs.
  poison_all();
  enqueue(w.stream.get(), 0);
  checks.final_stale = stale(1);
  time_unseen_inputs(w, plan, mode, flush_l2, fill, hold, check, sets.front(), launches.front(),
                     recorder, checks);
  return {.samples = std::move(timing), .checks = std::move(checks)};
}

class time_handler final : public phase_handler {
  void do_run(worker_context& w, worker_result& result,
              std::optional<std::size_t>& current) const override {
    current = w.request.timed_check;
    result.timing = run_timing(w);
  }
};

}  // namespace

const phase_handler& time_phase() {
  static const time_handler handler;
  return handler;
}

}  // namespace blaster::worker
