#include "portfolio/detail/figure_cases.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace blaster::detail {

using json = nlohmann::json;

std::optional<double> positive(const json& j, const std::string& key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return std::nullopt;
  const double v = j[key].get<double>();
  return std::isfinite(v) && v > 0 ? std::optional(v) : std::nullopt;
}

std::string times(double v) {
  if (v >= 100) return fmt::format("{:.0f}x", v);
  if (v >= 10) return fmt::format("{:.1f}x", v);
  if (v >= 1) return fmt::format("{:.2f}x", v);
  if (v >= 0.1) return fmt::format("{:.3f}x", v);
  return fmt::format("{:.3g}x", v);
}

case_view view_of(const json& row, const json& launch_floors) {
  case_view c;
  const std::string mode = row.value("mode", "");
  c.name = fmt::format("{} {} {} ({})", row.value("id", ""), row.value("task", ""),
                       row.value("case", ""), mode);
  const json best = row.value("best", json());
  if (!best.is_object()) return c;
  c.passed = true;
  c.variant = best.value("variant", "");
  const std::optional<double> speedup = positive(best, "speedup");
  std::string method;
  if (row.contains("pytorch") && row["pytorch"].is_object()) {
    for (const char* m : {"eager", "compile"}) {
      const std::optional<double> r = positive(row["pytorch"].value(m, json()), "ratio");
      if (r && (!c.ratio || *r < *c.ratio)) {  // the smaller ratio: the faster PyTorch time
        c.ratio = r;
        method = m;
      }
    }
  }
  c.against_pytorch = c.ratio.has_value();
  if (!c.ratio) c.ratio = speedup;
  if (c.ratio) {
    c.ratio_label =
        fmt::format("{} vs {}", times(*c.ratio), c.against_pytorch ? method : "baseline");
    const std::optional<double> low = positive(best, "speedup_low");
    const std::optional<double> high = positive(best, "speedup_high");
    if (speedup && low && high && *low <= *high) {
      c.ratio_low = *c.ratio * *low / *speedup;
      c.ratio_high = *c.ratio * *high / *speedup;
    }
  } else {
    c.ratio_label = "no speedup";
  }
  // A launch-bound case is held against the empty kernel: its bytes over the time would say
  // how little it moves, not how near it is to its limit.
  c.launch_bound = mode == "graph" || best.value("launch_bound", false);
  if (c.launch_bound) {
    std::optional<double> over = positive(row, "over_launch_floor");
    const std::optional<double> floor_us = positive(launch_floors, mode + "_us");
    const std::optional<double> time_us = positive(best, "time_us");
    if (!over && floor_us && time_us) over = *time_us / *floor_us;
    c.limit_label = over ? fmt::format("{:.2f}x the empty kernel", *over) : "launch-bound";
    return c;
  }
  if (const auto over_floor = positive(best, "time_over_floor")) {
    c.roofline_pct = 100.0 / *over_floor;
  } else {
    c.roofline_pct = positive(best, "copy_bandwidth_pct");
  }
  c.limit_label = c.roofline_pct ? fmt::format("{:.1f}%", *c.roofline_pct) : "no roofline";
  return c;
}

log_axis span_of(const std::vector<case_view>& cases) {
  double low = 1;
  double high = 1;
  for (const auto& c : cases) {
    if (!c.ratio) continue;
    low = std::min({low, *c.ratio, c.ratio_low.value_or(*c.ratio)});
    high = std::max({high, *c.ratio, c.ratio_high.value_or(*c.ratio)});
  }
  const double a = std::log10(low);
  const double b = std::log10(high);
  const double margin = std::max(0.06 * (b - a), 0.05);
  return {a - margin, b + margin};
}

std::vector<text_item> log_ticks(const log_axis& axis, double baseline_y) {
  const double decades = axis.high_log10 - axis.low_log10;
  const std::vector<double> mantissas = decades > 3 ? std::vector<double>{1}
                                        : decades > 1
                                            ? std::vector<double>{1, 2, 5}
                                            : std::vector<double>{1, 1.5, 2, 3, 4, 5, 6, 8};
  std::vector<text_item> all;
  for (int k = static_cast<int>(std::floor(axis.low_log10));
       k <= static_cast<int>(std::ceil(axis.high_log10)); ++k) {
    for (const double m : mantissas) {
      const double t = m * std::pow(10.0, k);
      const double l = std::log10(t);
      if (l < axis.low_log10 || l > axis.high_log10) continue;
      all.push_back(
          {axis.x(t), baseline_y, fmt::format("{:g}x", t), anchor::middle, small_font_px});
    }
  }
  const auto one =
      std::find_if(all.begin(), all.end(), [](const text_item& t) { return t.text == "1x"; });
  std::vector<text_item> kept;
  if (one == all.end()) return kept;
  kept.push_back(*one);
  for (auto it = one + 1, last = one; it != all.end(); ++it) {
    if (it->left_px() >= last->right_px() + 8) kept.push_back(*(last = it));
  }
  for (auto it = std::make_reverse_iterator(one), last = std::make_reverse_iterator(one + 1);
       it != all.rend(); ++it) {
    if (it->right_px() + 8 <= last->left_px()) kept.push_back(*(last = it));
  }
  return kept;
}

std::pair<double, double> roofline_span(const std::vector<case_view>& cases) {
  double top = 100;
  for (const auto& c : cases) top = std::max(top, c.roofline_pct.value_or(0));
  top *= 1.06;
  double step = 10;
  for (double scale = 1; top / step > 6; scale *= 10) {
    for (const double s : {10.0, 20.0, 25.0, 50.0}) {
      step = s * scale;
      if (top / step <= 6) break;
    }
  }
  return {std::ceil(top / step) * step, step};
}

}  // namespace blaster::detail
