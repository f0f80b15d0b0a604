#pragma once

#include <vector>

#include "benchmarking/compare/run_comparison.hpp"
#include "evidence/result_table.hpp"

namespace blaster {

// A comparison as a table: one row per task, case and variant with both times, the ratio and its
// interval, the status and what differs; the two sides before it; the notes of the comparison,
// the legend and the count of each status after it.
result_table comparison_table(const run_comparison& comparison, const std::vector<loaded_run>& a,
                              const std::vector<loaded_run>& b);

}  // namespace blaster
