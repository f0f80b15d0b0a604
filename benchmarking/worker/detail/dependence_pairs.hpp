#pragma once

// The timing's pairs of launches whose two sides differ in one thing only, each launch timed alone
// on the device (benchmarking/timing/output_dependence.hpp says what each pair compares and how
// they are judged): what the outputs hold, and the time since the last launch beside the
// harness's reference copy timed the same way.

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "benchmarking/candidate/kernel_binding.hpp"
#include "benchmarking/timing/buffer_copy.hpp"
#include "benchmarking/timing/output_dependence.hpp"
#include "benchmarking/timing/pattern_fill.hpp"
#include "benchmarking/timing/stream_hold.hpp"
#include "benchmarking/timing/timing_result.hpp"
#include "benchmarking/worker/detail/check_buffers.hpp"
#include "benchmarking/worker/detail/worker_context.hpp"
#include "profiling/kernel_activity.hpp"

namespace blaster::worker {

// The pairs of a timing on `sets`, whose launches are `launches` (each of `planned` kernels)
// and whose hot launches took `hot_us` on the device (0 where CUPTI saw nothing: then no pause
// pairs). `stale_set(k)` says whether set k's outputs are not what the gate checked; the first
// poisoned launch's that is not goes to `stale`.
poisoned_launches time_dependence_pairs(
    worker_context& w, std::vector<check_buffers>& sets,
    const std::vector<launch_sequence>& launches, std::size_t planned, double hot_us,
    kernel_recorder& recorder, const pattern_fill& fill, const buffer_copy& copy,
    const stream_hold& hold,
    const std::function<std::optional<stale_output>(std::size_t)>& stale_set,
    std::optional<stale_output>& stale);

}  // namespace blaster::worker
