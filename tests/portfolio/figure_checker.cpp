#include "figure_checker.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/file_io.hpp"

namespace blaster::testing {
namespace {

namespace fs = std::filesystem;

std::string unescaped(std::string s) {
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&amp;", "&"}}) {
    for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + 1)) {
      s.replace(at, from.size(), to);
    }
  }
  return s;
}

// A region of the figure, whole pixels [x0, x1) x [y0, y1), drawn `margin_px` inside a larger
// canvas with nothing clipped: ink that falls outside the region falls on the margin.
struct region {
  int x0, y0, x1, y1;
  [[nodiscard]] bool holds(const ink_box& b, int margin_px) const {
    return b.empty || (b.x0 >= margin_px && b.y0 >= margin_px && b.x1 < margin_px + (x1 - x0) &&
                       b.y1 < margin_px + (y1 - y0));
  }
  // Whether a text's ink cannot reach past the region, by a bound no glyph of a sans-serif
  // font exceeds (1.5 em a character, counted in bytes); a hint for naming culprits only.
  [[nodiscard]] bool surely_holds(const svg_text& t) const {
    const double em_px =
        std::max(16.0, std::isnan(number(t.open, "font-size")) ? 0.0 : number(t.open, "font-size"));
    const double x = number(t.open, "x");
    const double y = number(t.open, "y");
    const double reach_px = 1.5 * em_px * static_cast<double>(t.content.size());
    const std::string align = attribute(t.open, "text-anchor");
    const double left = align == "end" ? x - reach_px : align == "middle" ? x - reach_px / 2 : x;
    const double right = align == "end" ? x : align == "middle" ? x + reach_px / 2 : x + reach_px;
    return left - em_px >= x0 && right + em_px <= x1 && y - 1.5 * em_px >= y0 && y + em_px <= y1;
  }
  [[nodiscard]] std::string describe(const ink_box& b, int margin_px) const {
    return fmt::format("ink over x {}..{}, y {}..{}, outside x {}..{}, y {}..{}",
                       b.x0 - margin_px + x0, b.x1 - margin_px + x0, b.y0 - margin_px + y0,
                       b.y1 - margin_px + y0, x0, x1 - 1, y0, y1 - 1);
  }
};

constexpr int margin_px = 100;

region enclosing(double x, double y, double width, double height) {
  return {static_cast<int>(std::floor(x)), static_cast<int>(std::floor(y)),
          static_cast<int>(std::ceil(x + width)), static_cast<int>(std::ceil(y + height))};
}

// The figure's own <svg> element holding `content`, placed so that `r` lies margin_px inside.
std::string framed(const figure& f, const std::string& content, const region& r) {
  std::string inner = f.root;
  inner.insert(4, fmt::format(" x=\"{}\" y=\"{}\" overflow=\"visible\"", margin_px - r.x0,
                              margin_px - r.y0));
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\">\n{}\n"
      "{}</svg>\n</svg>\n",
      r.x1 - r.x0 + 2 * margin_px, r.y1 - r.y0 + 2 * margin_px, inner, content);
}

}  // namespace

std::string attribute(const std::string& open_tag, const std::string& name) {
  const std::string key = " " + name + "=\"";
  const std::size_t at = open_tag.find(key);
  if (at == std::string::npos) return "";
  const std::size_t begin = at + key.size();
  return open_tag.substr(begin, open_tag.find('"', begin) - begin);
}

double number(const std::string& open_tag, const std::string& name) {
  const std::string v = attribute(open_tag, name);
  return v.empty() ? std::nan("") : std::stod(v);
}

figure read_figure(const std::string& svg) {
  figure f;
  std::vector<int> groups;  // panel index or -1 for each open <g>
  for (std::size_t at = svg.find('<'); at != std::string::npos; at = svg.find('<', at + 1)) {
    const std::size_t close = svg.find('>', at);
    if (close == std::string::npos) break;
    const std::string tag = svg.substr(at, close + 1 - at);
    if (tag.rfind("<svg", 0) == 0 && f.root.empty()) {
      f.root = tag;
      f.width = number(tag, "width");
      f.height = number(tag, "height");
    } else if (tag.rfind("<g", 0) == 0) {
      if (attribute(tag, "class") == "panel") {
        f.panels.push_back({attribute(tag, "id"), tag});
        groups.push_back(static_cast<int>(f.panels.size()) - 1);
      } else {
        groups.push_back(groups.empty() ? -1 : groups.back());
      }
    } else if (tag == "</g>") {
      if (!groups.empty()) groups.pop_back();
    } else if (tag.rfind("<rect", 0) == 0 && attribute(tag, "class") == "bounds" &&
               !groups.empty() && groups.back() >= 0) {
      svg_panel& p = f.panels[groups.back()];
      p.x = number(tag, "x");
      p.y = number(tag, "y");
      p.width = number(tag, "width");
      p.height = number(tag, "height");
    } else if (tag.rfind("<text", 0) == 0) {
      const std::size_t end = svg.find("</text>", close);
      svg_text t;
      t.open = tag;
      t.content = unescaped(svg.substr(close + 1, end - close - 1));
      t.element = svg.substr(at, end + 7 - at);
      t.panel = groups.empty() ? -1 : groups.back();
      if (!attribute(tag, "id").empty()) f.text_by_id[attribute(tag, "id")] = t.content;
      f.texts.push_back(std::move(t));
    }
    if (!attribute(tag, "id").empty()) f.by_id[attribute(tag, "id")] = tag;
  }
  return f;
}

bool have_program(const std::string& name) {
  return std::system(fmt::format("command -v {} >/dev/null 2>&1", name).c_str()) == 0;
}

std::vector<ink_box> render(const std::vector<std::string>& svgs, const fs::path& dir,
                            std::string& failure) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string pngs;
  for (std::size_t i = 0; i < svgs.size(); ++i) {
    write_file_atomically(dir / fmt::format("{:04}.svg", i), svgs[i]);
    pngs += fmt::format(" {:04}.png", i);
  }
  const std::string command = fmt::format(
      "cd '{}' && for f in [0-9]*.svg; do rsvg-convert -b white -o \"${{f%.svg}}.png\" \"$f\" "
      "2>>rsvg.log || {{ echo \"rsvg-convert failed on $f\" >&2; exit 3; }}; done && "
      "python3 '{}/tests/portfolio/png_ink.py'{}",
      dir.string(), BLASTER_SOURCE_DIR, pngs);
  FILE* pipe = ::popen(command.c_str(), "r");
  std::string out;
  if (pipe != nullptr) {
    std::array<char, 4096> chunk{};
    while (std::size_t n = std::fread(chunk.data(), 1, chunk.size(), pipe))
      out.append(chunk.data(), n);
    const int status = ::pclose(pipe);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      failure = fmt::format("rendering failed (status {}): {}", status,
                            read_file_if_exists(dir / "rsvg.log").value_or(""));
      return {};
    }
  }
  std::vector<ink_box> boxes;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    int width = 0, height = 0;
    std::string first;
    words >> width >> height >> first;
    ink_box b;
    if (first != "empty") {
      b.empty = false;
      b.x0 = std::stoi(first);
      words >> b.y0 >> b.x1 >> b.y1;
    }
    boxes.push_back(b);
  }
  if (boxes.size() != svgs.size()) failure = "png_ink.py answered for the wrong number of files";
  return boxes;
}

std::vector<std::string> drawing_problems(const std::string& svg, const fs::path& dir) {
  std::vector<std::string> problems;
  const figure f = read_figure(svg);
  if (f.root.empty() || !(f.width > 0) || !(f.height > 0)) return {"no <svg> with a size"};
  const region canvas = enclosing(0, 0, f.width, f.height);
  auto inside = [](const svg_panel& p, double x, double y) {
    return x >= p.x && x <= p.x + p.width && y >= p.y && y <= p.y + p.height;
  };
  for (const auto& p : f.panels) {
    if (p.width < 0) problems.push_back(fmt::format("panel {} has no bounds", p.id));
    if (p.x < 0 || p.y < 0 || p.x + p.width > f.width || p.y + p.height > f.height) {
      problems.push_back(fmt::format("panel {} reaches outside the canvas", p.id));
    }
  }
  for (std::size_t i = 0; i < f.panels.size(); ++i) {
    for (std::size_t j = i + 1; j < f.panels.size(); ++j) {
      const svg_panel& a = f.panels[i];
      const svg_panel& b = f.panels[j];
      if (a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height &&
          b.y < a.y + a.height) {
        problems.push_back(fmt::format("panels {} and {} overlap", a.id, b.id));
      }
    }
  }
  for (const auto& t : f.texts) {
    if (t.panel < 0) {
      problems.push_back(fmt::format("text \"{}\" is in no panel", t.content));
    } else if (!inside(f.panels[t.panel], number(t.open, "x"), number(t.open, "y"))) {
      problems.push_back(
          fmt::format("text \"{}\" is anchored outside panel {}", t.content, f.panels[t.panel].id));
    }
  }

  // Render 0: the whole figure; then each panel's text alone, in its own region.
  struct check {
    std::string what;
    region where;
    std::vector<const svg_text*> texts;
  };
  std::vector<check> checks;
  checks.push_back({"the canvas", canvas, {}});
  for (const auto& t : f.texts) checks[0].texts.push_back(&t);
  for (std::size_t i = 0; i < f.panels.size(); ++i) {
    const svg_panel& p = f.panels[i];
    check c{
        "panel " + p.id, enclosing(p.x, p.y, std::max(p.width, 0.0), std::max(p.height, 0.0)), {}};
    for (const auto& t : f.texts) {
      if (t.panel == static_cast<int>(i)) c.texts.push_back(&t);
    }
    checks.push_back(std::move(c));
  }
  // Texts without the rest, each in its panel's <g> so that the group's attributes apply.
  auto drawn = [&](const std::vector<const svg_text*>& texts, const region& where) {
    std::string content;
    for (const auto* t : texts) {
      content += t->panel < 0 ? t->element + "\n"
                              : f.panels[t->panel].open + "\n" + t->element + "\n</g>\n";
    }
    return framed(f, content, where);
  };
  const std::size_t body_begin = svg.find('>', svg.find("<svg")) + 1;
  const std::size_t body_end = svg.rfind("</svg>");
  std::vector<std::string> svgs = {
      framed(f, svg.substr(body_begin, body_end - body_begin), canvas)};
  for (std::size_t i = 1; i < checks.size(); ++i) {
    svgs.push_back(drawn(checks[i].texts, checks[i].where));
  }
  std::string failure;
  const std::vector<ink_box> boxes = render(svgs, dir / "whole", failure);
  if (!failure.empty()) return {failure};

  for (std::size_t i = 0; i < checks.size(); ++i) {
    const check& c = checks[i];
    bool has_words = false;
    for (const auto* t : c.texts)
      has_words |= t->content.find_first_not_of(' ') != std::string::npos;
    if (has_words && boxes[i].empty) {
      problems.push_back(fmt::format("{}: its text drew nothing (no font?)", c.what));
    }
    if (c.where.holds(boxes[i], margin_px)) continue;
    // Name the texts that stray, drawing alone each that could reach past the region; if none
    // does, something else was drawn outside.
    std::vector<const svg_text*> suspects;
    for (const auto* t : c.texts) {
      if (!c.where.surely_holds(*t)) suspects.push_back(t);
    }
    std::vector<std::string> alone;
    for (const auto* t : suspects) alone.push_back(drawn({t}, c.where));
    const std::vector<ink_box> each = alone.empty()
                                          ? std::vector<ink_box>{}
                                          : render(alone, dir / fmt::format("alone{}", i), failure);
    if (!failure.empty()) return {failure};
    bool named = false;
    for (std::size_t k = 0; k < each.size(); ++k) {
      if (c.where.holds(each[k], margin_px)) continue;
      problems.push_back(fmt::format("text \"{}\": {} ({})", suspects[k]->content,
                                     c.where.describe(each[k], margin_px), c.what));
      named = true;
    }
    if (!named) {
      problems.push_back(
          fmt::format("{}: {}, and not by a text", c.what, c.where.describe(boxes[i], margin_px)));
    }
  }
  return problems;
}

}  // namespace blaster::testing
