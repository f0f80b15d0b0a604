#pragma once

#include <vector>

#include "benchmarking/report/bench_report.hpp"
#include "benchmarking/runner/bench_runner.hpp"
#include "benchmarking/runner/detail/compile_stage.hpp"
#include "benchmarking/runner/warm_bench.hpp"
#include "benchmarking/worker/worker_launcher.hpp"
#include "tasks/reference.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {

class store;

// Gates every runnable variant in its own evaluation, spread over the run's GPUs, then times the
// survivors in sessions on the first GPU: each session one evaluation per variant (a fresh worker
// each, or the series' kept worker), in alternating order (forward, then backward) so that drift
// over a run falls on baseline and candidates alike, and the baseline timed a second time at the
// session's other end for the A/A self-check. With several GPUs and confirm_best, a screening
// session spread over them comes first; a candidate is ranked by its time over the baseline's
// on the same GPU, and only the sessions on the first GPU enter a verdict.
// It holds the lock of every GPU of `launchers`, one per lane of `kept`, throughout.
void measure_stage(const bench_options& options, const task_spec& task, reference_fn reference,
                   const std::vector<worker_launcher>& launchers, store& records,
                   bench_report& report,
                   const std::vector<compiled_candidates::runnable_variant>& runnable,
                   warm_bench& kept);

}  // namespace blaster
