#pragma once

// What a portfolio's report and the check of its claims both read from a case's run: the same
// rule picks the same candidate on both sides.

#include <optional>

#include <nlohmann/json.hpp>

#include "benchmarking/report/bench_report.hpp"

namespace blaster::detail {

// The candidate a case is reported by: an improvement the verdict confirms first, then one
// timed in every session, then the largest speedup; none when no candidate passed.
const variant_result* best_result(const bench_report& report);

// The number, or null.
nlohmann::json optional_number(const std::optional<double>& v);

}  // namespace blaster::detail
