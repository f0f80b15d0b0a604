#pragma once

// The checks the figure's tests make of an SVG: its elements read back, and whether a renderer
// (rsvg-convert, Debian's librsvg2-bin) draws every text inside the canvas and its panel.

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace blaster::testing {

// An attribute of an element's opening tag, or "" where it has none.
std::string attribute(const std::string& open_tag, const std::string& name);
// A numeric attribute; NaN where it has none.
double number(const std::string& open_tag, const std::string& name);

struct svg_panel {
  std::string id;
  std::string open;                              // its <g> tag
  double x = 0, y = 0, width = -1, height = -1;  // its <rect class="bounds">
};

struct svg_text {
  std::string element;  // <text ...>...</text>
  std::string open;
  std::string content;
  int panel = -1;  // index into figure::panels; -1: in none
};

struct figure {
  std::string root;  // the <svg> tag
  double width = 0, height = 0;
  std::vector<svg_panel> panels;
  std::vector<svg_text> texts;
  std::map<std::string, std::string> by_id;  // open tags
  std::map<std::string, std::string> text_by_id;
};

figure read_figure(const std::string& svg);

bool have_program(const std::string& name);

struct ink_box {
  bool empty = true;
  int x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // inclusive pixel bounds
};

// Renders each SVG with a white background into dir; the ink of each, or why there is none
// (failure set, nothing returned).
std::vector<ink_box> render(const std::vector<std::string>& svgs, const std::filesystem::path& dir,
                            std::string& failure);

// Everything that is drawn where it should not be, one line each; empty when all is well.
// The canvas holds all ink; each <text> is inside a panel; panels lie inside the canvas and do
// not overlap; each panel's text, drawn alone with the renderer's fonts, stays inside the
// panel's bounds. A region that fails is redrawn text by text to name the culprits.
std::vector<std::string> drawing_problems(const std::string& svg, const std::filesystem::path& dir);

}  // namespace blaster::testing
