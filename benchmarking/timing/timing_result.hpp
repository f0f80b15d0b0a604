#pragma once

// What a timing produced: the samples and their statistics, the device's own account of the
// kernels that ran, and the checks that the timed launches did the work. Each type has one JSON
// form, which the worker sends, the report keeps and the store cites.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarking/timing/output_dependence.hpp"
#include "core/timing_mode.hpp"

namespace blaster {

// One kernel CUPTI saw during the recorded runs of the plan.
struct kernel_account {
  std::string kernel;  // its lowered (mangled) name
  int count = 0;       // executions observed
  double us = 0.0;     // [microseconds] its device time per run of the plan
};

// The device record's account of the kernels: their own time per run of the plan and the
// events' time over the same runs (cold: every sample taken; hot and graph: one more sample after
// them), over `runs` runs of the plan, and whether the kernels were exactly the plan's.
struct cupti_account {
  int runs = 0;
  double kernel_us = 0.0;  // [microseconds]
  double event_us = 0.0;   // [microseconds]
  std::vector<kernel_account> kernels;
  bool matches_plan = false;
  std::string error;  // how the record differs from the plan, or why there is none
};

struct timing_samples {
  timing_mode mode = timing_mode::hot;
  int inner = 1;          // launches of the plan per sample
  int buffer_copies = 1;  // buffer sets the launches rotate over
  // Where sample_us comes from: the CUDA events around the launches, or (a mode timed by the
  // device) the kernels' own time on the device; then event_us holds the events' time of the
  // same kept samples.
  std::string source = "CUDA events";
  std::vector<double> sample_us;  // [microseconds] per launch, kept samples only
  std::vector<double> event_us;   // [microseconds]
  double median_us = 0.0;         // [microseconds]
  double noise = 0.0;             // relative noise of the kept samples
  std::string stopped_by;         // converged, budget, max_samples
  int taken = 0;                  // samples taken, kept or discarded
  int discarded_samples = 0;      // samples dropped for a low clock
  double mean_clock_mhz = 0.0;    // [MHz] over the kept samples; 0 without a clock probe
  cupti_account cupti;
};

// A timed launch whose output is not the checked one: where it first differs.
struct stale_output {
  std::string buffer;
  std::size_t buffer_copy = 0;  // which of the rotated buffer sets
  std::size_t first_index = 0;
  std::size_t differing_elements = 0;
};

// What the worker checked of the timed launches: one sample's outputs (every sample's where the
// mode checks every sample), a launch on poisoned outputs after the timing, the poisoned and
// control launches of the output-dependence check, and the launches on the case's other draws.
struct timing_checks {
  int spot_sample = -1;  // the sample checked; every sample: the first that failed, else -1
  bool spot_every_sample = false;
  int checked_samples = 0;
  std::optional<stale_output> spot_stale{};
  std::optional<stale_output> final_stale{};
  std::optional<poisoned_launches> poisoned{};
  std::optional<stale_output> poisoned_stale{};
  std::optional<unseen_inputs> unseen{};  // where the gate checked the case on other draws
};

nlohmann::json to_json(const cupti_account& a);
cupti_account cupti_account_from_json(const nlohmann::json& j);
nlohmann::json to_json(const timing_samples& t);
timing_samples timing_samples_from_json(const nlohmann::json& j);
nlohmann::json to_json(const stale_output& s);
stale_output stale_output_from_json(const nlohmann::json& j);
nlohmann::json to_json(const timing_checks& c);
timing_checks timing_checks_from_json(const nlohmann::json& j);

}  // namespace blaster
