#pragma once

// The hardware counters of one run of a plan, kernel by kernel, as the worker's profile phase
// collected them: diagnostics beside a measurement, never a measurement.

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profiling/occupancy.hpp"

namespace blaster {

struct kernel_counters {
  std::size_t launch = 0;  // its index in the plan
  std::string kernel;      // the lowered name
  std::map<std::string, double> counters;
  std::optional<occupancy_estimate> occupancy;
  // Half a unit in the last digit of counters read from text (ncu prints "0.07"), in the
  // counter's unit; a counter not named here is exact.
  std::map<std::string, double> resolution;
  // Where counters are the median of several counts: the lowest and the highest count.
  std::map<std::string, std::pair<double, double>> range;
};

struct counter_profile {
  std::string source;  // what collected them: "CUPTI range profiler", "Nsight Compute"
  std::string chip;    // "GH100"
  int passes = 0;      // replays of the plan the counters took, in each run
  int runs = 1;        // runs of the whole count, each kernel's counters their median
  std::string case_name;
  std::vector<kernel_counters> kernels;
  std::vector<std::string> missing;  // counters this chip does not have
  // [bytes] what the L2 sweep writes to DRAM with no kernel before it (the profiler's own
  // records), left out of each kernel's write-back.
  double sweep_dram_bytes_written = 0;
  std::string unavailable;  // no counters at all, and why (ERR_NVGPUCTRPERM, say)
};

// The plan's counters: additive ones (bytes, instructions, time) summed over its kernels, the
// others (rates, shares) weighted by each kernel's time.
std::map<std::string, double> plan_counters(const counter_profile& p);

// The median of each counter over several counts of the same work (the mean of the middle two
// for an even number): a warp's stall counts on a memory-bound kernel vary by a tenth from one
// count to the next, and now and then one count lands far off, which a mean would follow; its
// bytes and instructions do not vary. A counter missing from any run is missing from the median.
std::map<std::string, double> median_counters(
    const std::vector<std::map<std::string, double>>& runs);
// The lowest and highest count of each counter that every run has.
std::map<std::string, std::pair<double, double>> counter_ranges(
    const std::vector<std::map<std::string, double>>& runs);

// `kernels` holds `runs` counts of a plan of `launches` kernels, one after the other; the result
// holds each launch's median. Throws std::invalid_argument when the kernels are not that many.
std::vector<kernel_counters> median_by_launch(const std::vector<kernel_counters>& kernels,
                                              std::size_t launches, int runs);

nlohmann::json to_json(const kernel_counters& k);
kernel_counters kernel_counters_from_json(const nlohmann::json& j);
nlohmann::json to_json(const counter_profile& p);
counter_profile counter_profile_from_json(const nlohmann::json& j);

}  // namespace blaster
