#pragma once

// Nsight Compute's report of a worker's kernels: how to ask ncu for the same counters as the
// range profiler, and its answer read back as a counter_profile, so that the two can be set
// side by side.

#include <string>
#include <string_view>
#include <vector>

#include "profiling/counter_profile.hpp"

namespace blaster {

// ncu's options for a report of `metrics` in `report` (a path without .ncu-rep), its own messages
// into `log`: the clocks as found, every process the worker starts, and every kernel but those
// named in `uncounted` (the harness's own). The worker runs once per pass (application replay), and
// ncu neither flushes the caches nor saves and restores memory around a kernel: the worker's own
// sweeps leave each kernel the same L2 as CUPTI's count, where ncu's restore in kernel replay left
// about 3 MiB of dirty lines that the kernel wrote back. A stall ratio among `metrics` brings the
// two counts it is the quotient of, which ncu prints whole where it prints the ratio to two
// decimals.
std::vector<std::string> ncu_profile_arguments(const std::string& report, const std::string& log,
                                               const std::vector<std::string>& metrics,
                                               const std::vector<std::string_view>& uncounted);
// Options that print a report's raw page of `metrics` as CSV into `csv`.
std::vector<std::string> ncu_import_arguments(const std::string& report_file,
                                              const std::string& csv,
                                              const std::vector<std::string>& metrics);

// The CSV that ncu_import_arguments asks for: one kernel per row, in launch order, each stall
// ratio the quotient of its counts where that prints as ncu's ratio does. Throws
// std::invalid_argument, naming the line, on anything else.
counter_profile parse_ncu_csv(std::string_view csv, const std::vector<std::string>& metrics);

}  // namespace blaster
