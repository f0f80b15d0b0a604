#pragma once

// What the figure shows of each case of a portfolio summary, and the axes that span them.

#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "portfolio/detail/svg_text.hpp"

namespace blaster::detail {

// j[key] where it is a finite positive number.
std::optional<double> positive(const nlohmann::json& j, const std::string& key);

// Three significant digits: 124x, 52.8x, 1.08x, 0.916x, 0.05x.
std::string times(double v);

// What the figure shows of one row of the summary.
struct case_view {
  std::string name;  // "004 matvec canonical (hot)"
  std::string variant;
  bool passed = false;
  // The faster PyTorch method's time over blaster's best, or where the case has no PyTorch time
  // the speedup over the baseline; the speedup's interval scaled alike.
  std::optional<double> ratio, ratio_low, ratio_high;
  bool against_pytorch = false;
  std::string ratio_label;             // "1.08x vs compile"
  std::optional<double> roofline_pct;  // bandwidth-bound cases only
  std::string limit_label;             // "96.3%", "2.14x the empty kernel"
  bool launch_bound = false;
};

// The case of one row of the summary; launch_floors is the device's (hot_us, graph_us, ...).
case_view view_of(const nlohmann::json& row, const nlohmann::json& launch_floors);

struct log_axis {
  double low_log10 = -1;
  double high_log10 = 1;
  [[nodiscard]] double x(double v) const {
    return ratio_plot_px * (std::log10(v) - low_log10) / (high_log10 - low_log10);
  }
};

// Spans every ratio and whisker and 1.0, with a margin.
log_axis span_of(const std::vector<case_view>& cases);

// Ticks at the powers of ten, at 1, 2 and 5, or finer, as the span allows, kept where their labels
// do not collide, outward from 1x.
std::vector<text_item> log_ticks(const log_axis& axis, double baseline_y);

// The roofline axis's top and step [%]: 0 to past the largest percentage (at least 100%), in
// steps of 10, 20, 25, 50, 100, ...
std::pair<double, double> roofline_span(const std::vector<case_view>& cases);

}  // namespace blaster::detail
