#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarking/correctness_check.hpp"
#include "benchmarking/gate_protocol.hpp"
#include "benchmarking/output_dependence.hpp"
#include "benchmarking/reason_code.hpp"
#include "core/mapped_file.hpp"
#include "tasks/reference.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {

// Seeds every case is checked with: two fixed, so that runs can be compared, and the run's own,
// drawn at run time so that no candidate can be tuned to its inputs.
std::vector<std::uint64_t> gate_seeds(std::uint64_t run_seed);

// The inputs and float64 references of every check of a run (each case with each seed),
// computed once and shared by every candidate: inputs through a mapped file the workers read,
// outputs through a mapped file they write. The references never leave this process, and they
// are computed before any candidate runs only because no candidate can reach this process's
// memory.
class gate_data {
 public:
  // `timed_case` empty: the task's canonical case.
  gate_data(const task_spec& task, reference_fn reference, const std::vector<std::uint64_t>& seeds,
            const std::filesystem::path& dir, const std::string& timed_case = {});
  ~gate_data();
  gate_data(const gate_data&) = delete;
  gate_data& operator=(const gate_data&) = delete;

  [[nodiscard]] const std::vector<gate_check>& checks() const { return checks_; }
  [[nodiscard]] const std::filesystem::path& inputs_file() const { return inputs_path_; }
  [[nodiscard]] const std::filesystem::path& outputs_file() const { return outputs_path_; }
  // The check of the timed case with the run's own seed: what timing uses.
  [[nodiscard]] std::size_t timed_check() const { return timed_check_; }
  [[nodiscard]] std::span<const double> expected(std::size_t check, std::size_t output) const;
  [[nodiscard]] std::span<const std::byte> produced(std::size_t check, std::size_t output) const;
  // Saves the timed check's outputs as the last gate left them to `path`, for that variant's
  // timing to compare its own launches against: the next variant's gate overwrites them here.
  // Returns the offset in the gate's layout where the saved bytes start.
  std::size_t keep_timed_outputs(const std::filesystem::path& path) const;
  // Task-design guards: outputs a constant or a zero could match within the tolerance.
  [[nodiscard]] const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  std::filesystem::path inputs_path_;
  std::filesystem::path outputs_path_;
  std::vector<gate_check> checks_;
  std::vector<std::vector<std::vector<double>>> expected_;  // [check][output]
  mapped_file outputs_;
  std::size_t timed_check_ = 0;
  std::vector<std::string> warnings_;
};

// One check's verdict and its evidence.
struct case_check {
  std::string case_name;
  std::uint64_t seed = 0;
  reason_code reason = reason_code::none;
  std::string message;
  std::vector<error_metrics> outputs;
  nlohmann::json worker;  // what the worker reported: canaries, inputs, determinism, digests
};

struct gate_outcome {
  reason_code reason = reason_code::none;
  std::string message;  // the evidence, one line
  std::vector<case_check> checks;
  double wall_s = 0.0;
  nlohmann::json profile;  // worker_answer::profile
};

struct timing_outcome {
  reason_code reason = reason_code::none;
  std::string message;
  std::optional<timing_samples> timing;
  std::optional<poisoned_launches> poisoned;  // hot and graph mode
  double wall_s = 0.0;
  nlohmann::json profile;  // worker_answer::profile
};

// What a worker answered: its result object, or why there is none.
struct worker_answer {
  nlohmann::json result;                  // null when the worker gave none
  reason_code ended = reason_code::none;  // timeout or crash, when result is null
  std::string why;                        // the same in words, with the worker's last step
  double wall_s = 0.0;                    // [seconds]
  int exit_code = -1;                     // the process's, when it exited
  // [milliseconds] where the wall time went, by the worker's steps ("context", "run", ...);
  // "process" is what the worker did not see: starting and ending the process.
  nlohmann::json profile = nlohmann::json::object();
};

// How the parent starts a worker: the blaster executable and the run's scratch folder.
struct worker_launcher {
  std::filesystem::path executable;
  std::filesystem::path dir;
  // Runs the request in a supervised child; `wrapper` (a program and its arguments, such as
  // compute-sanitizer's) runs the worker under it.
  [[nodiscard]] worker_answer run(const worker_request& request, std::chrono::milliseconds deadline,
                                  const std::vector<std::string>& wrapper = {}) const;
};

// Runs every check of one variant in a worker and judges what it produced. A check that faults
// on an illegal address runs once more with its guards mapped, to name the write.
gate_outcome run_gate(const task_spec& task, const gate_data& data, worker_request request,
                      const worker_launcher& launcher, std::chrono::milliseconds deadline);

// Times one variant that passed the gate, in a fresh worker, and checks that the timed launches
// did the work: their outputs (one sample's, every sample's in cold mode, and launches on
// poisoned outputs after the timing) against the checked output, and their device time on
// poisoned outputs against the time on outputs that already hold the answer, within what the
// cache explains at `copy_bytes_per_second`.
timing_outcome run_timing(const gate_data& data, worker_request request,
                          const worker_launcher& launcher, std::chrono::milliseconds deadline,
                          double copy_bytes_per_second);

}  // namespace blaster
