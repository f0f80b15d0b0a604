#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "benchmarking/gate/reason_code.hpp"
#include "benchmarking/worker/gate_protocol.hpp"
#include "benchmarking/worker/step_profile.hpp"
#include "benchmarking/worker/worker_result.hpp"
#include "core/worker_process.hpp"

namespace blaster {

// What a worker answered: its result, or why there is none.
struct worker_answer {
  std::optional<worker_result> result;    // none when the worker gave none
  reason_code ended = reason_code::none;  // timeout or crash, when there is no result
  std::string why;                        // the same in words, with the worker's last step
  double wall_s = 0.0;                    // [seconds]
  int exit_code = -1;                     // the process's, when it exited
  step_profile profile;                   // where the wall time went, by the worker's steps
};

class persistent_worker;

// How the parent starts a worker: the blaster executable, the run's scratch folder and the GPU.
struct worker_launcher {
  std::filesystem::path executable;
  std::filesystem::path dir;
  // The GPU its workers see, as their CUDA_VISIBLE_DEVICES (gpu_lane::visible); empty: what
  // this process sees. `lane` numbers it among the run's GPUs, and picks its outputs file.
  std::string visible;
  std::size_t lane = 0;
  // A worker kept between evaluations (`blaster __worker --serve`), or none. It serves the gate
  // and the timing, which a loop repeats for every candidate; the other phases, and any run
  // under a wrapper, get a process of their own.
  persistent_worker* kept = nullptr;
  // Runs the request in a supervised child; `wrapper` (a program and its arguments, such as
  // compute-sanitizer's) runs the worker under it.
  [[nodiscard]] worker_answer run(const worker_request& request, std::chrono::milliseconds deadline,
                                  const std::vector<std::string>& wrapper = {}) const;
};

// The arguments that start a kept worker.
std::vector<std::string> kept_worker_argv(const std::filesystem::path& executable);
// What a worker for the GPU `visible` (gpu_lane::visible) runs under.
worker_limits worker_limits_for(const std::string& visible);

// Evaluations a kept worker serves before a fresh process replaces it: a bound on what one
// process and its context live through (driver state, CUPTI's buffers), at the cost of one start
// per this many.
inline constexpr int kept_worker_evaluations = 32;

}  // namespace blaster
