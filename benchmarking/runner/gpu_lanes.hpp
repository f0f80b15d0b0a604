#pragma once

// The GPUs of a run (--gpus): which they are, the worker launcher and the lock of each, and what
// the probe of each found. A series keeps them in warm_bench::lanes; the first lane times every
// session that a verdict compares, the others gate and screen beside it.

#include <chrono>
#include <deque>
#include <filesystem>
#include <string>
#include <vector>

#include "benchmarking/report/bench_report.hpp"
#include "benchmarking/runner/gpu_choice.hpp"
#include "benchmarking/runner/warm_bench.hpp"
#include "benchmarking/worker/worker_launcher.hpp"
#include "core/device_lock.hpp"

namespace blaster {

// The first evaluations, the probe and the baseline, get this long: nothing is known yet of what
// the task needs.
inline constexpr std::chrono::milliseconds first_deadline{120'000};

// The GPUs `choice` names among those this machine shows, as a worker of `executable` lists
// them. Throws cuda::gpu_unavailable where there is none, and an input_error, naming the GPUs
// that are there, for a choice of GPUs that are not or of two models.
std::vector<gpu_lane> choose_gpus(const gpu_choice& choice,
                                  const std::filesystem::path& executable);

// The launcher of each of the series' lanes, choosing them at its first run: this process's
// device 0 without `choice` (and for a compile-only run, which looks for no GPU), else the GPUs
// `choice` names; where there is none to list, one lane whose probe says why.
std::vector<worker_launcher> lane_launchers(const gpu_choice& choice, bool compile_only,
                                            const std::filesystem::path& executable,
                                            warm_bench& kept);

// Probes every lane's GPU at once, each under its own lock: each measures its own ceilings.
void probe_lanes(const std::vector<worker_launcher>& launchers, warm_bench& kept);

// What the lanes' probes found, into the report: the first lane's device and ceilings, every
// lane's device where there are several, and no GPU where any lane has none.
void apply_lanes(const warm_bench& kept, bench_report& report);

// The locks of every GPU of a run, taken in the order of their names, so that two runs that want
// some of the same GPUs cannot each hold one that the other waits for.
void take_turns(const std::vector<worker_launcher>& launchers, std::deque<device_lock>& turns);

// The UUID of lane `lane`'s GPU where the run has several, for each result to name its own;
// empty with one.
std::string lane_uuid(const warm_bench& kept, std::size_t lane);

}  // namespace blaster
