#include "portfolio/detail/report_rows.hpp"

#include <tuple>

namespace blaster::detail {

const variant_result* best_result(const bench_report& report) {
  const variant_result* best = nullptr;
  auto rank = [](const variant_result& r) {
    const bool improved = r.verdict && r.verdict->v == verdict::improved;
    return std::tuple(improved ? 1 : 0, r.screened ? 0 : 1, r.speedup.value_or(0.0));
  };
  for (const auto& r : report.results) {
    if (r.status != "passed" || r.baseline) continue;
    if (best == nullptr || rank(r) > rank(*best)) best = &r;
  }
  return best;
}

nlohmann::json optional_number(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

}  // namespace blaster::detail
