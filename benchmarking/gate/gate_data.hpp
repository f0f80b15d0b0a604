#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "benchmarking/worker/gate_protocol.hpp"
#include "core/mapped_file.hpp"
#include "tasks/reference.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {

// Seeds every case is checked with: two fixed, so that runs can be compared, and the run's own,
// drawn at run time so that no candidate can be tuned to its inputs.
std::vector<std::uint64_t> gate_seeds(std::uint64_t run_seed);

// The inputs and float64 references of every check of a run (each case with each seed),
// computed once and shared by every candidate: inputs through a mapped file the workers read,
// outputs through a mapped file they write, one per lane (a GPU of --gpus) so that the gates of
// several GPUs run side by side. The references never leave this process, and they
// are computed before any candidate runs only because no candidate can reach this process's
// memory.
class gate_data {
 public:
  // `timed_cases`: every case that the runs on this data time, the first timed until time()
  // names another; none: the task's canonical case. `lanes`: how many outputs files.
  gate_data(const task_spec& task, reference_fn reference, const std::vector<std::uint64_t>& seeds,
            const std::filesystem::path& dir, const std::vector<std::string>& timed_cases = {},
            std::size_t lanes = 1);
  ~gate_data();
  gate_data(const gate_data&) = delete;
  gate_data& operator=(const gate_data&) = delete;

  [[nodiscard]] const std::vector<gate_check>& checks() const { return checks_; }
  [[nodiscard]] const std::filesystem::path& inputs_file() const { return inputs_path_; }
  [[nodiscard]] const std::filesystem::path& outputs_file(std::size_t lane = 0) const {
    return outputs_paths_.at(lane);
  }
  [[nodiscard]] std::size_t lanes() const { return outputs_paths_.size(); }
  // The check of the timed case with the run's own seed: what timing uses.
  [[nodiscard]] std::size_t timed_check() const { return timed_check_; }
  // The check that timing `case_name`, one of the timed cases, uses.
  [[nodiscard]] std::size_t timed_check(const std::string& case_name) const;
  [[nodiscard]] std::vector<std::string> timed_cases() const;
  // Times `case_name`, one of the timed cases, from now on.
  void time(const std::string& case_name) { timed_check_ = timed_check(case_name); }
  [[nodiscard]] std::span<const double> expected(std::size_t check, std::size_t output) const;
  // The reference's second acceptable value per element (NaN: none); empty for outputs that are
  // not integers.
  [[nodiscard]] std::span<const double> alternatives(std::size_t check, std::size_t output) const;
  [[nodiscard]] std::span<const std::byte> produced(std::size_t check, std::size_t output,
                                                    std::size_t lane = 0) const;
  // Saves a timed case's outputs as the last gate of `lane` left them to `path`, for that
  // variant's timing to compare its own launches against: the next variant's gate overwrites
  // them here. Returns the offset in the gate's layout where the saved bytes start.
  std::size_t keep_timed_outputs(const std::filesystem::path& path, const std::string& case_name,
                                 std::size_t lane = 0) const;
  // The digest (piecewise_sha256_hex) of each output of the timed case's other draws as the
  // last gate of `lane` left them, by check: what the timing's launches on those draws must give
  // again. A digest keeps a large case's gigabytes off the disk.
  [[nodiscard]] std::map<std::size_t, std::vector<std::string>> other_draws_sha256(
      const std::string& case_name, std::size_t lane = 0) const;
  // Task-design guards: outputs a constant or a zero could match within the tolerance.
  [[nodiscard]] const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  std::filesystem::path inputs_path_;
  std::vector<std::filesystem::path> outputs_paths_;  // per lane
  std::vector<gate_check> checks_;
  std::vector<std::vector<std::vector<double>>> expected_;      // [check][output]
  std::vector<std::vector<std::vector<double>>> alternatives_;  // [check][output]
  std::vector<mapped_file> outputs_;                            // per lane
  std::size_t timed_check_ = 0;
  std::map<std::string, std::size_t> timed_checks_;  // per timed case
  std::vector<std::string> warnings_;
};

// The request for one phase over the run's shared data, its outputs in `lane`'s file.
worker_request with_data(worker_request request, const gate_data& data, worker_phase phase,
                         std::size_t lane = 0);

}  // namespace blaster
