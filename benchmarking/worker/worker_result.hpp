#pragma once

// What a worker answers with: the one {"result": ...} line at the end of its channel. A phase
// fills its own member; a failure keeps what the phase finished before it (the checks of a gate),
// which is evidence too.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarking/ceilings/launch_floor.hpp"
#include "benchmarking/ceilings/matrix_rate.hpp"
#include "benchmarking/ceilings/memory_ceilings.hpp"
#include "benchmarking/gate/gate_result.hpp"
#include "benchmarking/gate/reason_code.hpp"
#include "benchmarking/timing/timing_result.hpp"
#include "core/cuda_context.hpp"
#include "profiling/counter_profile.hpp"

namespace blaster {

// A failure the worker could name itself; the parent turns it into the candidate's verdict.
struct worker_failure {
  reason_code reason = reason_code::crash;
  std::string message;
  std::optional<std::size_t> check;  // the check under way
  std::string cuda_error;            // the driver's name for the error, when it was one
};

// The probe phase: the device and what blaster measured on it.
struct device_probe {
  cuda::device_properties device;
  memory_ceilings memory;
  matrix_rate matrix;
  launch_floors floors;
};

// The time phase: the samples and the checks of the timed launches.
struct timing_answer {
  timing_samples samples;
  timing_checks checks;
};

struct worker_result {
  std::optional<std::string> unavailable;  // no GPU: why
  std::optional<worker_failure> failure;
  std::optional<device_probe> probe;
  std::vector<check_evidence> checks;  // the gate phase's, in order
  std::optional<timing_answer> timing;
  std::optional<check_evidence> located;   // the locate phase's rerun of one check
  std::optional<counter_profile> profile;  // the profile phase's counters
  // The devices phase's: every GPU the worker sees, in CUDA's order.
  std::optional<std::vector<cuda::device_properties>> devices;
  // A kept worker exits after this answer (the candidate used the device heap): the parent
  // must not send it another request.
  bool leaving = false;
};

nlohmann::json to_json(const device_probe& p);
device_probe device_probe_from_json(const nlohmann::json& j);
nlohmann::json to_json(const worker_result& r);
worker_result worker_result_from_json(const nlohmann::json& j);

}  // namespace blaster
