#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "benchmarking/report/bench_report.hpp"
#include "evidence/result_table.hpp"

namespace blaster {

// What a variant's counters say, in lines under its row: the diagnosis, each kernel's occupancy
// and its limiter, counters the chip lacks, and where Nsight Compute's report differs from them.
std::vector<std::string> diagnostic_lines(const diagnostics& d);

// A profile run's results: one row per variant with the counters' metrics, the diagnosis under
// it; with --ncu, every counter beside Nsight Compute's value of it.
result_table profile_table(const bench_report& report);

// Nsight Compute's value of each counter against CUPTI's, kernel by kernel: {counter, kernel,
// CUPTI, ncu, relative difference}, for every counter both have.
struct counter_agreement {
  std::string counter;
  std::size_t launch = 0;
  double cupti = 0;
  double ncu = 0;
  // Each tool's lowest and highest count, where its value is the median of several.
  std::optional<std::pair<double, double>> cupti_range;
  std::optional<std::pair<double, double>> ncu_range;
  // |ncu - cupti|, less half a unit in the last digit ncu printed, / max(|ncu|, |cupti|); 0
  // where both are 0
  double difference = 0;
};
std::vector<counter_agreement> ncu_agreement(const diagnostics& d);

}  // namespace blaster
