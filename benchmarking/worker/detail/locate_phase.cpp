// A check run again with its guards mapped and filled with canaries, after its first run
// faulted: the fault is then a write that lands in them (its buffer and offset found), or an
// access beyond every guard, or a read.
#include "benchmarking/candidate/kernel_binding.hpp"
#include "benchmarking/worker/detail/check_buffers.hpp"
#include "benchmarking/worker/detail/phase_handler.hpp"
#include "benchmarking/worker/detail/result_channel.hpp"

namespace blaster::worker {
namespace {

class locate_handler final : public phase_handler {
  void do_run(worker_context& w, worker_result& result,
              std::optional<std::size_t>& current) const override {
    const std::size_t index = w.request.timed_check;
    current = index;
    const gate_check& check = w.request.checks.at(index);
    const task_case& c = w.task.find_case(check.case_name);
    const resolved_plan plan = resolve_plan(*w.candidate.plan, *w.variant, w.task, c);
    send_step("allocate", index);
    check_buffers buffers = allocate_check(w, check, plan, w.request.guard_bytes);
    poison(w, buffers);
    settle(w);
    const launch_sequence launches(plan, *w.module, buffers.pointers);
    send_step("run 1", index);
    launches.enqueue(w.stream.get());
    w.stream.synchronize();
    send_step("inspect", index);
    result.located = check_evidence{.check = index,
                                    .case_name = check.case_name,
                                    .seed = check.seed,
                                    .runs = 1,
                                    .canaries = changed_canaries(w, buffers)};
  }
};

}  // namespace

const phase_handler& locate_phase() {
  static const locate_handler handler;
  return handler;
}

}  // namespace blaster::worker
