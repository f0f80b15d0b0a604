#include "portfolio/detail/svg_text.hpp"

#include <algorithm>

namespace blaster::detail {
namespace {

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

}  // namespace

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

std::string xml_escaped(std::string_view text) {
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

std::string vertical_line(double x, double y1, double y2, const char* stroke, const char* extra) {
  return fmt::format(
      "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\"{4}/>\n", x,
      y1, y2, stroke, extra);
}

}  // namespace blaster::detail
