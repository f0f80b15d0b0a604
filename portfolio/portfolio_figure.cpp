#include "portfolio/portfolio_figure.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "benchmarking/statistics/statistics.hpp"
#include "portfolio/detail/figure_cases.hpp"
#include "portfolio/detail/svg_text.hpp"
#include "portfolio/portfolio_report.hpp"

namespace blaster {

using json = nlohmann::json;
using namespace detail;

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
                     header_y, xml_escaped(ratio_header));
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
                     header_y, xml_escaped(limit_header));
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
