#pragma once

// The judge of the gate and of the timing: runs a variant's workers over the run's shared data
// and decides from what they answered. The data lives in gate_data, the workers are started by
// worker_launcher, and what the worker does is benchmarking/worker/.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "benchmarking/gate/gate_data.hpp"
#include "benchmarking/gate/gate_result.hpp"
#include "benchmarking/gate/reason_code.hpp"
#include "benchmarking/timing/timing_result.hpp"
#include "benchmarking/worker/gate_protocol.hpp"
#include "benchmarking/worker/step_profile.hpp"
#include "benchmarking/worker/worker_launcher.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {

struct gate_outcome {
  reason_code reason = reason_code::none;
  std::string message;  // the evidence, one line
  std::vector<case_check> checks;
  double wall_s = 0.0;
  step_profile profile;
};

struct timing_outcome {
  reason_code reason = reason_code::none;
  std::string message;
  std::optional<timing_samples> timing;
  std::optional<poisoned_launches> poisoned;  // where the mode checks output dependence
  std::optional<unseen_inputs> unseen;        // where the gate checked other draws of the case
  double wall_s = 0.0;
  step_profile profile;
};

// Runs every check of one variant in a worker and judges what it produced. A check that faults
// on an illegal address runs once more with its guards mapped, to name the write.
gate_outcome run_gate(const task_spec& task, const gate_data& data, worker_request request,
                      const worker_launcher& launcher, std::chrono::milliseconds deadline);

// Times one variant that passed the gate, in the launcher's worker, and checks that the timed
// launches did the work: their outputs (one sample's, every sample's where the mode checks every
// sample, and launches on poisoned outputs after the timing) against the checked output, and
// their device time on poisoned outputs against the time after an equal write elsewhere, and
// after a pause against back to back. Where a kept worker's launches depend on the outputs by
// that time, a fresh worker times the variant again and decides.
timing_outcome run_timing(const gate_data& data, worker_request request,
                          const worker_launcher& launcher, std::chrono::milliseconds deadline);

}  // namespace blaster
