#pragma once

// The figure's drawing vocabulary: its layout, how wide a label will render, text that knows
// its own extent, and the panels that hold it.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace blaster::detail {

// Layout [px].
inline constexpr double margin_px = 12;       // canvas edge to the panels
inline constexpr double panel_gap_px = 24;    // between panels side by side
inline constexpr double slack_px = 6;         // between a panel's text and its bounds
inline constexpr double row_px = 30;          // one case
inline constexpr double bar_px = 14;          // a bar's height
inline constexpr double ratio_plot_px = 360;  // the log axis's length
inline constexpr double limit_plot_px = 260;  // the roofline axis's length
inline constexpr double label_gap_px = 5;     // between a bar (or whisker) and its label
inline constexpr double body_font_px = 12;    // the root's font-size
inline constexpr double small_font_px = 11;
inline constexpr double title_font_px = 14;

inline constexpr const char* pytorch_fill = "#4a7ebb";
inline constexpr const char* baseline_fill = "#e69138";
inline constexpr const char* roofline_fill = "#6aa84f";
inline constexpr const char* muted_fill = "#555555";

// [px]; a code point beyond ASCII counts as a full em. Bold DejaVu Sans runs about 10% wider.
double text_width_px(std::string_view text, double font_px, bool bold);

// Text with &, <, > and " written as entities, for an SVG element or attribute.
std::string xml_escaped(std::string_view text);

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
    return fmt::format("<text {}>{}</text>\n", attributes, xml_escaped(text));
  }
};

// Where a panel's plot area lies once its labels are measured: pads on either side hold every
// label that runs past the plot's ends.
struct panel_box {
  double x = 0;       // [px] on the canvas
  double plot_x = 0;  // [px] the plot's left end
  double width = 0;
};

// The panel at x whose plot is plot_px wide, padded so that every text of the plot (placed
// relative to the plot's left end) and a header header_px wide fit inside.
panel_box fit(double x, double plot_px, const std::vector<text_item>& plot_texts, double header_px);

// A <g class="panel"> opened with its <rect class="bounds">: the area its text stays in.
std::string open_panel(const char* id, double x, double y, double width, double height);

std::string vertical_line(double x, double y1, double y2, const char* stroke,
                          const char* extra = "");

}  // namespace blaster::detail
