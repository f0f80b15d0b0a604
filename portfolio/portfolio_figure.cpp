#include "portfolio/portfolio_figure.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "portfolio/portfolio_report.hpp"

namespace blaster {
namespace {

using json = nlohmann::json;

// Layout [px].
constexpr double margin_px = 12;       // canvas edge to the panels
constexpr double panel_gap_px = 24;    // between panels side by side
constexpr double slack_px = 6;         // between a panel's text and its bounds
constexpr double row_px = 30;          // one case
constexpr double bar_px = 14;          // a bar's height
constexpr double ratio_plot_px = 360;  // the log axis's length
constexpr double limit_plot_px = 260;  // the roofline axis's length
constexpr double label_gap_px = 5;     // between a bar (or whisker) and its label
constexpr double body_font_px = 12;    // the root's font-size
constexpr double small_font_px = 11;
constexpr double title_font_px = 14;

constexpr const char* pytorch_fill = "#4a7ebb";
constexpr const char* baseline_fill = "#e69138";
constexpr const char* roofline_fill = "#6aa84f";
constexpr const char* muted_fill = "#555555";

// Advance widths of DejaVu Sans (the sans-serif of most Linux renderers, and wider than Arial
// or Helvetica) in em, ASCII ' ' to '~'. Labels are placed by this estimate, so it errs wide.
constexpr double ascii_advance_em[95] = {
    0.318, 0.400, 0.460, 0.837, 0.636, 0.950, 0.780, 0.274, 0.390, 0.390, 0.500, 0.837,
    0.317, 0.360, 0.317, 0.336, 0.636, 0.636, 0.636, 0.636, 0.636, 0.636, 0.636, 0.636,
    0.636, 0.636, 0.336, 0.336, 0.837, 0.837, 0.837, 0.531, 1.000, 0.712, 0.686, 0.698,
    0.770, 0.632, 0.575, 0.774, 0.752, 0.295, 0.295, 0.656, 0.557, 0.863, 0.748, 0.787,
    0.603, 0.787, 0.695, 0.635, 0.593, 0.732, 0.684, 0.989, 0.685, 0.610, 0.685, 0.390,
    0.336, 0.390, 0.837, 0.500, 0.500, 0.613, 0.635, 0.550, 0.635, 0.615, 0.352, 0.635,
    0.634, 0.278, 0.278, 0.579, 0.278, 0.974, 0.634, 0.612, 0.635, 0.635, 0.394, 0.521,
    0.392, 0.634, 0.592, 0.817, 0.592, 0.592, 0.524, 0.636, 0.336, 0.636, 0.837};

// [px]; a code point beyond ASCII counts as a full em. Bold DejaVu Sans runs about 10% wider.
double text_width_px(std::string_view text, double font_px, bool bold) {
  double em = 0;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f) {
      em += ascii_advance_em[c - 0x20];
    } else if ((c & 0xc0) != 0x80) {  // the lead byte of a UTF-8 sequence
      em += 1.0;
    }
  }
  return em * font_px * (bold ? 1.15 : 1.0) * 1.04;
}

std::string escaped(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::optional<double> positive(const json& j, const std::string& key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return std::nullopt;
  const double v = j[key].get<double>();
  return std::isfinite(v) && v > 0 ? std::optional(v) : std::nullopt;
}

// Three significant digits: 124x, 52.8x, 1.08x, 0.916x, 0.05x.
std::string times(double v) {
  if (v >= 100) return fmt::format("{:.0f}x", v);
  if (v >= 10) return fmt::format("{:.1f}x", v);
  if (v >= 1) return fmt::format("{:.2f}x", v);
  if (v >= 0.1) return fmt::format("{:.3f}x", v);
  return fmt::format("{:.3g}x", v);
}

double geometric_mean(const std::vector<double>& values) {
  double log_sum = 0;
  for (const double v : values) log_sum += std::log(v);
  return std::exp(log_sum / static_cast<double>(values.size()));
}

enum class anchor { start, middle, end };

struct text_item {
  text_item(double x_px, double y_px, std::string words, anchor a = anchor::start,
            double size_px = body_font_px, const char* colour = nullptr, std::string name = {},
            bool heavy = false)
      : x(x_px),
        y(y_px),
        text(std::move(words)),
        align(a),
        font_px(size_px),
        fill(colour),
        id(std::move(name)),
        bold(heavy) {}

  double x;  // [px] from the left end of its panel's plot; element() adds where that lies
  double y;  // [px] the baseline
  std::string text;
  anchor align;
  double font_px;
  const char* fill;  // none: the root's
  std::string id;
  bool bold;

  [[nodiscard]] double width_px() const { return text_width_px(text, font_px, bold); }
  [[nodiscard]] double left_px() const {
    return align == anchor::start    ? x
           : align == anchor::middle ? x - width_px() / 2
                                     : x - width_px();
  }
  [[nodiscard]] double right_px() const { return left_px() + width_px(); }
  // A white ground under a label, so that a grid line or a marker does not strike through it.
  [[nodiscard]] std::string backing(double dx) const {
    return fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"white\"/>\n",
        left_px() + dx - 1, y - 0.85 * font_px, width_px() + 2, 1.1 * font_px);
  }
  [[nodiscard]] std::string element(double dx) const {
    std::string attributes = fmt::format("x=\"{:.1f}\" y=\"{:.1f}\"", x + dx, y);
    if (!id.empty()) attributes += fmt::format(" id=\"{}\"", id);
    if (align == anchor::middle) attributes += " text-anchor=\"middle\"";
    if (align == anchor::end) attributes += " text-anchor=\"end\"";
    if (font_px != body_font_px) attributes += fmt::format(" font-size=\"{}\"", font_px);
    if (bold) attributes += " font-weight=\"bold\"";
    if (fill != nullptr) attributes += fmt::format(" fill=\"{}\"", fill);
    return fmt::format("<text {}>{}</text>\n", attributes, escaped(text));
  }
};

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

// Where a panel's plot area lies once its labels are measured: pads on either side hold every
// label that runs past the plot's ends.
struct panel_box {
  double x = 0;       // [px] on the canvas
  double plot_x = 0;  // [px] the plot's left end
  double width = 0;
};

panel_box fit(double x, double plot_px, const std::vector<text_item>& plot_texts,
              double header_px) {
  double left = 0;
  double right = plot_px;
  for (const auto& t : plot_texts) {
    left = std::min(left, t.left_px());
    right = std::max(right, t.right_px());
  }
  const double pad_left = slack_px - left;
  panel_box box{x, x + pad_left, pad_left + right + slack_px};
  box.width = std::max(box.width, header_px + 2 * slack_px);
  return box;
}

std::string open_panel(const char* id, double x, double y, double width, double height) {
  return fmt::format(
      "<g class=\"panel\" id=\"{}\">\n<rect class=\"bounds\" x=\"{:.1f}\" y=\"{:.1f}\" "
      "width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\"/>\n",
      id, x, y, width, height);
}

std::string vertical_line(double x, double y1, double y2, const char* stroke,
                          const char* extra = "") {
  return fmt::format(
      "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\"{4}/>\n", x,
      y1, y2, stroke, extra);
}

struct log_axis {
  double low_log10 = -1;
  double high_log10 = 1;
  [[nodiscard]] double x(double v) const {
    return ratio_plot_px * (std::log10(v) - low_log10) / (high_log10 - low_log10);
  }
};

// Spans every ratio and whisker and 1.0, with a margin.
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

// Ticks at the powers of ten, at 1, 2 and 5, or finer, as the span allows, kept where their labels
// do not collide, outward from 1x.
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

// 0 to past the largest percentage (at least 100%), in steps of 10, 20, 25, 50, 100, ...
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

}  // namespace

std::string render_portfolio_svg(const json& summary) {
  std::vector<case_view> cases;
  const json device = summary.value("device", json());
  const json launch_floors = device.is_object() ? device.value("launch_floors", json()) : json();
  for (const auto& row : summary.at("rows")) cases.push_back(view_of(row, launch_floors));
  const auto rows = static_cast<double>(cases.size());

  // Rows of text, top to bottom [px]: the title band, the panels' headers and markers, the
  // cases, the axes' ticks, the legend.
  const double title_y = margin_px + title_font_px;
  const double headline_y = title_y + 20;
  const double panels_top = headline_y + 10;
  const double header_y = panels_top + 16;
  const double marker_y = panels_top + 32;
  const double plot_top = panels_top + 38;
  const double plot_bottom = plot_top + rows * row_px + 4;
  const double tick_y = plot_bottom + 17;
  const double panels_bottom = plot_bottom + 24;
  auto row_top = [&](std::size_t i) { return plot_top + static_cast<double>(i) * row_px; };

  // The headline: the geometric mean of blaster's best against the faster PyTorch method.
  std::vector<double> pytorch_ratios;
  bool any_baseline_bar = false;
  bool any_launch_bound = false;
  for (const auto& c : cases) {
    if (c.against_pytorch) pytorch_ratios.push_back(*c.ratio);
    any_baseline_bar |= c.ratio && !c.against_pytorch;
    any_launch_bound |= c.launch_bound;
  }
  const std::optional<double> speedup_mean =
      positive(summary.value("geometric_means", json()), "speedup_over_baseline");
  std::string headline;
  if (!pytorch_ratios.empty()) {
    headline = fmt::format(
        "blaster's best is {} as fast as the faster of PyTorch eager and torch.compile "
        "(geometric mean over {} of {} cases)",
        times(geometric_mean(pytorch_ratios)), pytorch_ratios.size(), cases.size());
    if (speedup_mean) headline += fmt::format("; {} over the baselines", times(*speedup_mean));
  } else {
    headline = "no PyTorch times";
    if (speedup_mean) {
      headline += fmt::format(": blaster's best is {} over the baselines (geometric mean)",
                              times(*speedup_mean));
    }
  }
  std::string title = summary.value("title", summary.value("suite", "portfolio"));
  if (device.is_object() && device.contains("name") && device["name"].is_string()) {
    title += fmt::format(" ({})", device["name"].get<std::string>());
  }
  const std::vector<text_item> title_texts = {
      {margin_px, title_y, title, anchor::start, title_font_px, nullptr, "figure-title", true},
      {margin_px, headline_y, headline, anchor::start, 13, nullptr, "headline"}};

  // Cases: the name and, below it, the best candidate.
  std::vector<text_item> case_texts = {
      {0, header_y, "case (timing mode), best candidate", anchor::start, body_font_px}};
  for (std::size_t i = 0; i < cases.size(); ++i) {
    case_texts.push_back({0, row_top(i) + 13, cases[i].name});
    if (!cases[i].variant.empty()) {
      case_texts.push_back(
          {0, row_top(i) + 26, cases[i].variant, anchor::start, small_font_px, muted_fill});
    }
  }
  const panel_box case_box = fit(margin_px, 0, case_texts, 0);

  // The ratio panel, on a log axis: bars from 1.0x, labels past the bar or its whisker.
  const log_axis axis = span_of(cases);
  const std::vector<text_item> ratio_ticks = log_ticks(axis, tick_y);
  std::vector<text_item> ratio_texts = ratio_ticks;
  ratio_texts.push_back(
      {axis.x(1), marker_y, "1.0x", anchor::middle, small_font_px, nullptr, "ratio-unity-label"});
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const case_view& c = cases[i];
    const double y = row_top(i) + 19.5;
    const std::string id = fmt::format("row{}-ratio", i);
    if (!c.passed) {
      ratio_texts.push_back({axis.x(1) + label_gap_px, y, "none passed", anchor::start,
                             body_font_px, muted_fill, id});
    } else if (!c.ratio) {
      ratio_texts.push_back({axis.x(1) + label_gap_px, y, c.ratio_label, anchor::start,
                             body_font_px, muted_fill, id});
    } else if (*c.ratio >= 1) {
      const double end = axis.x(std::max(*c.ratio, c.ratio_high.value_or(*c.ratio)));
      ratio_texts.push_back(
          {end + label_gap_px, y, c.ratio_label, anchor::start, body_font_px, nullptr, id});
    } else {
      const double end = axis.x(std::min(*c.ratio, c.ratio_low.value_or(*c.ratio)));
      ratio_texts.push_back(
          {end - label_gap_px, y, c.ratio_label, anchor::end, body_font_px, nullptr, id});
    }
  }
  const std::string ratio_header = pytorch_ratios.empty()
                                       ? "speedup over the baseline (log scale)"
                                       : "vs the faster of PyTorch eager and torch.compile (log "
                                         "scale)";
  const panel_box ratio_box = fit(case_box.x + case_box.width + panel_gap_px, ratio_plot_px,
                                  ratio_texts, text_width_px(ratio_header, body_font_px, false));

  // The limit panel: % of the roofline on a linear axis, or the time over the empty kernel.
  const auto [roofline_top_pct, roofline_step_pct] = roofline_span(cases);
  auto roofline_x = [&](double pct) { return limit_plot_px * pct / roofline_top_pct; };
  std::vector<text_item> limit_texts;
  for (double pct = 0; pct <= roofline_top_pct + 1e-9; pct += roofline_step_pct) {
    limit_texts.push_back(
        {roofline_x(pct), tick_y, fmt::format("{:g}%", pct), anchor::middle, small_font_px});
  }
  limit_texts.push_back({roofline_x(100), marker_y, "100%", anchor::middle, small_font_px, nullptr,
                         "roofline-full-label"});
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const case_view& c = cases[i];
    if (!c.passed) continue;
    const std::string id = fmt::format("row{}-limit", i);
    const double y = row_top(i) + 19.5;
    if (c.roofline_pct) {
      limit_texts.push_back({roofline_x(*c.roofline_pct) + label_gap_px, y, c.limit_label,
                             anchor::start, body_font_px, nullptr, id});
    } else {
      limit_texts.push_back(
          {label_gap_px, y, c.limit_label, anchor::start, body_font_px, muted_fill, id});
    }
  }
  const std::string limit_header = fmt::format(
      "% of the roofline ({:.0f}% goal dashed), or time over an empty kernel", bandwidth_goal_pct);
  const panel_box limit_box = fit(ratio_box.x + ratio_box.width + panel_gap_px, limit_plot_px,
                                  limit_texts, text_width_px(limit_header, body_font_px, false));

  // The legend, one line a key.
  struct legend_key {
    std::string id;
    std::string swatch;  // a fill colour, "whisker" or "text"
    std::string text;
  };
  std::vector<legend_key> keys;
  if (!pytorch_ratios.empty()) {
    keys.push_back({"legend-pytorch", pytorch_fill,
                    "the faster of PyTorch eager and torch.compile: its time over blaster's best, "
                    "in the same mode (right of 1.0x, blaster is faster)"});
  }
  if (any_baseline_bar) {
    keys.push_back({"legend-baseline", baseline_fill,
                    "no PyTorch time for the case: blaster's best over the task's baseline "
                    "(its speedup) instead"});
  }
  keys.push_back({"legend-interval", "whisker",
                  "the 95% interval of the speedup over the baseline, carried over to the ratio"});
  keys.push_back({"legend-roofline", roofline_fill,
                  fmt::format("bandwidth-bound cases: the roofline floor (the case's bytes at the "
                              "measured ceilings) over the time; 100% solid, {:.0f}% goal dashed",
                              bandwidth_goal_pct)});
  if (any_launch_bound) {
    keys.push_back({"legend-launch", "text",
                    "launch-bound cases (graph mode, or marked launch-bound): the time over an "
                    "empty kernel's in the same mode"});
  }
  const double legend_top = panels_bottom + 6;
  const double legend_bottom = legend_top + 14 + static_cast<double>(keys.size() - 1) * 18 + 8;
  std::vector<text_item> legend_texts;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const double y = legend_top + 14 + static_cast<double>(i) * 18;
    if (keys[i].swatch == "text") {
      legend_texts.push_back({margin_px, y, "2.1x", anchor::start, small_font_px, muted_fill});
    }
    legend_texts.push_back({margin_px + 30, y, keys[i].text, anchor::start, body_font_px, nullptr,
                            keys[i].id + "-text"});
  }

  // The canvas holds the panels side by side and the widest line of the title or the legend.
  double width = limit_box.x + limit_box.width + margin_px;
  for (const auto& t : title_texts) width = std::max(width, t.right_px() + slack_px + margin_px);
  for (const auto& t : legend_texts) width = std::max(width, t.right_px() + slack_px + margin_px);
  width = std::ceil(width);
  const double height = std::ceil(legend_bottom + margin_px);

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"{2}\">\n"
      "<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n",
      width, height, body_font_px);

  svg += open_panel("title", 0, 0, width, panels_top);
  for (const auto& t : title_texts) svg += t.element(0);
  svg += "</g>\n";

  const double panel_height = panels_bottom - panels_top;
  svg += open_panel("cases", case_box.x, panels_top, case_box.width, panel_height);
  for (const auto& t : case_texts) svg += t.element(case_box.plot_x);
  svg += "</g>\n";

  // Ratio panel: grid at the ticks, the bars, whiskers, the 1.0x line, labels.
  svg += open_panel("ratio", ratio_box.x, panels_top, ratio_box.width, panel_height);
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", ratio_box.x + slack_px,
                     header_y, escaped(ratio_header));
  const double rx = ratio_box.plot_x;
  for (const auto& t : ratio_ticks) {
    svg += vertical_line(rx + t.x, plot_top, plot_bottom, "#e3e3e3");
    svg += vertical_line(rx + t.x, plot_bottom, plot_bottom + 4, "#000000");
  }
  svg += fmt::format(
      "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#000000\"/>\n", rx,
      plot_bottom, rx + ratio_plot_px, plot_bottom);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const case_view& c = cases[i];
    if (!c.ratio) continue;
    const double a = axis.x(1);
    const double b = axis.x(*c.ratio);
    const double bar_y = row_top(i) + 8;
    svg += fmt::format(
        "<rect id=\"row{}-bar\" x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{}\" "
        "fill=\"{}\"/>\n",
        i, rx + std::min(a, b), bar_y, std::max(std::fabs(b - a), 1.0), bar_px,
        c.against_pytorch ? pytorch_fill : baseline_fill);
    if (c.ratio_low && c.ratio_high) {
      const double lo = rx + axis.x(*c.ratio_low);
      const double hi = rx + axis.x(*c.ratio_high);
      const double mid = bar_y + bar_px / 2;
      svg += fmt::format(
          "<path id=\"row{5}-interval\" d=\"M{0:.2f} {2:.1f}H{1:.2f}M{0:.2f} {3:.1f}V{4:.1f}"
          "M{1:.2f} {3:.1f}V{4:.1f}\" stroke=\"#222222\" fill=\"none\"/>\n",
          lo, hi, mid, mid - 4, mid + 4, i);
    }
  }
  svg += fmt::format(
      "<line id=\"ratio-unity\" x1=\"{0:.2f}\" y1=\"{1:.1f}\" x2=\"{0:.2f}\" y2=\"{2:.1f}\" "
      "stroke=\"#000000\"/>\n",
      rx + axis.x(1), plot_top - 4, plot_bottom);
  for (const auto& t : ratio_texts) {
    if (!t.id.empty()) svg += t.backing(rx);  // not under the ticks, below the plot
    svg += t.element(rx);
  }
  svg += "</g>\n";

  // Limit panel: the roofline axis, its bars, the 100% line and the goal, the labels.
  svg += open_panel("limit", limit_box.x, panels_top, limit_box.width, panel_height);
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", limit_box.x + slack_px,
                     header_y, escaped(limit_header));
  const double lx = limit_box.plot_x;
  for (double pct = 0; pct <= roofline_top_pct + 1e-9; pct += roofline_step_pct) {
    svg += vertical_line(lx + roofline_x(pct), plot_top, plot_bottom, "#e3e3e3");
    svg += vertical_line(lx + roofline_x(pct), plot_bottom, plot_bottom + 4, "#000000");
  }
  svg += fmt::format(
      "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#000000\"/>\n", lx,
      plot_bottom, lx + limit_plot_px, plot_bottom);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (!cases[i].roofline_pct) continue;
    svg += fmt::format(
        "<rect id=\"row{}-roofline\" x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{}\" "
        "fill=\"{}\"/>\n",
        i, lx, row_top(i) + 8, roofline_x(*cases[i].roofline_pct), bar_px, roofline_fill);
  }
  svg += vertical_line(lx + roofline_x(bandwidth_goal_pct), plot_top - 4, plot_bottom, "#888888",
                       " stroke-dasharray=\"4 3\"");
  svg += fmt::format(
      "<line id=\"roofline-full\" x1=\"{0:.2f}\" y1=\"{1:.1f}\" x2=\"{0:.2f}\" y2=\"{2:.1f}\" "
      "stroke=\"#000000\"/>\n",
      lx + roofline_x(100), plot_top - 4, plot_bottom);
  for (const auto& t : limit_texts) {
    if (!t.id.empty()) svg += t.backing(lx);
    svg += t.element(lx);
  }
  svg += "</g>\n";

  svg += open_panel("legend", 0, legend_top, width, legend_bottom - legend_top);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const double y = legend_top + 14 + static_cast<double>(i) * 18;
    if (keys[i].swatch == "whisker") {
      svg += fmt::format(
          "<path d=\"M{0:.1f} {2:.1f}H{1:.1f}M{0:.1f} {3:.1f}V{4:.1f}M{1:.1f} {3:.1f}V{4:.1f}\" "
          "stroke=\"#222222\" fill=\"none\"/>\n",
          margin_px, margin_px + 20, y - 4, y - 8, y);
    } else if (keys[i].swatch != "text") {
      svg += fmt::format(
          "<rect id=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"20\" height=\"10\" fill=\"{}\"/>\n",
          keys[i].id, margin_px, y - 9, keys[i].swatch);
    }
  }
  for (const auto& t : legend_texts) svg += t.element(0);
  svg += "</g>\n</svg>\n";
  return svg;
}

}  // namespace blaster
