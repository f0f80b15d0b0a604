// The portfolio's figure as a renderer draws it. rsvg-convert (Debian's librsvg2-bin) renders
// the SVG with its own fonts into a canvas with a margin around the figure's, png_ink.py finds
// where ink fell, and every text must lie inside the canvas and inside its panel: on the
// checked-in core10 bundle and on summaries with extreme values. The figure must also say what
// the summary says: the ratio to the faster PyTorch method on a log axis with 1.0x marked, and
// the roofline or the launch floor as the case is bound.
#include <gtest/gtest.h>
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
#include "portfolio/portfolio_figure.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// ---- The figure's elements, as far as the checks need them.

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

std::string unescaped(std::string s) {
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&amp;", "&"}}) {
    for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + 1)) {
      s.replace(at, from.size(), to);
    }
  }
  return s;
}

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

// ---- Rendering: rsvg-convert draws, png_ink.py says where the ink fell.

bool have_program(const std::string& name) {
  return std::system(fmt::format("command -v {} >/dev/null 2>&1", name).c_str()) == 0;
}

struct ink_box {
  bool empty = true;
  int x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // inclusive pixel bounds
};

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

// Renders each SVG with a white background; the ink of each, or why there is none.
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

// Everything that is drawn where it should not be, one line each; empty when all is well.
// The canvas holds all ink; each <text> is inside a panel; panels lie inside the canvas and do
// not overlap; each panel's text, drawn alone with the renderer's fonts, stays inside the
// panel's bounds. A region that fails is redrawn text by text to name the culprits.
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

// ---- Summaries.

json load_core10() {
  return json::parse(
      read_file(fs::path(BLASTER_SOURCE_DIR) / "artifacts/core10-h200-v1/results.json"));
}

json candidate(const std::string& variant, double speedup, double time_over_floor) {
  return {{"variant", variant},
          {"time_us", 10.0},
          {"speedup", speedup},
          {"speedup_low", speedup * 0.97},
          {"speedup_high", speedup * 1.02},
          {"verdict", "improved"},
          {"copy_bandwidth_pct", 100.0 / time_over_floor},
          {"time_over_floor", time_over_floor},
          {"launch_bound", false}};
}

json pytorch_at(double eager_ratio, double compile_ratio) {
  return {{"eager", {{"us", 10.0 * eager_ratio}, {"ratio", eager_ratio}, {"status", "ok"}}},
          {"compile", {{"us", 10.0 * compile_ratio}, {"ratio", compile_ratio}, {"status", "ok"}}}};
}

json case_row(const std::string& id, const std::string& task, const std::string& mode, json best,
              json pytorch = nullptr) {
  json row = {{"id", id},       {"task", task}, {"case", "canonical"},
              {"shape", "n=1"}, {"mode", mode}, {"best", std::move(best)}};
  if (!pytorch.is_null()) row["pytorch"] = std::move(pytorch);
  return row;
}

// A 500x speedup with no PyTorch time (and a name to escape), a ratio of 0.05, 180% of the
// roofline, a 40-character variant name, a case where nothing passed, a graph-mode case and a hot
// one marked launch-bound.
json extremes() {
  json launch_bound = candidate("tiny_hot", 1.5, 30.0);
  launch_bound["launch_bound"] = true;
  json graph =
      case_row("006", "tiny", "graph", candidate("tiny_graph", 1.2, 40.0), pytorch_at(1.3, 1.6));
  graph["over_launch_floor"] = 2.137;
  return {
      {"title", "extremes"},
      {"device", {{"name", "a GPU"}, {"launch_floors", {{"hot_us", 4.0}, {"graph_us", 1.0}}}}},
      {"rows",
       {case_row("001", "huge", "hot", candidate("huge_vec<&>", 500.0, 1.1)),
        case_row("002", "slow", "hot", candidate("slow_vec", 1.1, 1.3), pytorch_at(0.05, 0.08)),
        case_row("003", "over", "hot", candidate("over_vec", 2.0, 1.0 / 1.8), pytorch_at(3.0, 2.0)),
        case_row("004", "long", "hot",
                 candidate("a_forty_character_variant_name[X=1,Y=22]", 3.0, 1.2),
                 pytorch_at(1.5, 1.4)),
        case_row("005", "none", "hot", nullptr), graph,
        case_row("007", "tiny", "hot", launch_bound, pytorch_at(1.1, 0.9))}},
      {"geometric_means", {{"speedup_over_baseline", 4.2}}}};
}

json without_pytorch(json summary) {
  for (auto& row : summary["rows"]) row.erase("pytorch");
  summary["geometric_means"].erase("ratio_to_pytorch_eager");
  summary["geometric_means"].erase("ratio_to_pytorch_compile");
  return summary;
}

// The smaller ratio of those present: against the faster PyTorch time.
std::optional<std::pair<double, std::string>> faster_pytorch(const json& row) {
  std::optional<std::pair<double, std::string>> out;
  if (!row.contains("pytorch")) return out;
  for (const char* m : {"eager", "compile"}) {
    if (!row["pytorch"].contains(m) || !row["pytorch"][m].contains("ratio")) continue;
    const double r = row["pytorch"][m]["ratio"].get<double>();
    if (!out || r < out->first) out = std::pair(r, std::string(m));
  }
  return out;
}

// The number a label starts with ("1.08x vs compile": 1.08).
double leading_number(const std::string& label) {
  return label.empty() ? std::nan("") : std::strtod(label.c_str(), nullptr);
}

// 3 significant digits, as the labels are written.
void expect_label_near(const std::string& label, double expected) {
  EXPECT_NEAR(leading_number(label), expected, 0.006 * expected) << label;
}

bool launch_bound(const json& row) {
  return row.value("mode", "") == "graph" || row["best"].value("launch_bound", false);
}

class PortfolioFigureDrawn : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("blaster-figure-{}-{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    for (const char* program : {"rsvg-convert", "python3"}) {
      if (!have_program(program)) {
        GTEST_SKIP() << program << " is not installed: the figure cannot be rendered (Debian: "
                     << "apt-get install librsvg2-bin python3; scripts/setup.sh installs both)";
      }
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Renders and checks; the problems are the failure message.
  void expect_drawn_inside(const std::string& svg) {
    const std::vector<std::string> problems = drawing_problems(svg, dir_);
    std::string all;
    for (const auto& p : problems) all += "\n  " + p;
    EXPECT_TRUE(problems.empty()) << problems.size() << " problems:" << all;
  }

  fs::path dir_;
};

// ---- The checker itself: it must see what is drawn where it should not be.

TEST_F(PortfolioFigureDrawn, InkIsFoundWhereItIs) {
  // A 7x3 black rectangle at (10, 5): the ink's bounds, to the pixel, through every filter
  // libpng may choose.
  std::string failure;
  const auto boxes =
      render({"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"40\" height=\"20\"><rect x=\"10\" "
              "y=\"5\" width=\"7\" height=\"3\"/></svg>",
              "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"40\" height=\"20\"/>"},
             dir_, failure);
  ASSERT_TRUE(failure.empty()) << failure;
  ASSERT_EQ(boxes.size(), 2U);
  EXPECT_FALSE(boxes[0].empty);
  EXPECT_EQ((std::array<int, 4>{boxes[0].x0, boxes[0].y0, boxes[0].x1, boxes[0].y1}),
            (std::array<int, 4>{10, 5, 16, 7}));
  EXPECT_TRUE(boxes[1].empty);
}

TEST_F(PortfolioFigureDrawn, CheckerNamesTextsOutsideTheirPanelOrTheCanvas) {
  const std::string svg =
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"200\" height=\"60\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n"
      "<g class=\"panel\" id=\"left\">\n<rect class=\"bounds\" x=\"0\" y=\"0\" width=\"100\" "
      "height=\"60\" fill=\"none\"/>\n<text x=\"60\" y=\"30\">spills over</text>\n"
      "<text x=\"4\" y=\"50\">fits</text>\n</g>\n"
      "<g class=\"panel\" id=\"right\">\n<rect class=\"bounds\" x=\"100\" y=\"0\" width=\"100\" "
      "height=\"60\" fill=\"none\"/>\n<text x=\"170\" y=\"50\">past the edge</text>\n</g>\n"
      "<text x=\"4\" y=\"12\">loose</text>\n</svg>\n";
  const std::vector<std::string> problems = drawing_problems(svg, dir_);
  auto named = [&](const std::string& what, const std::string& where) {
    return std::any_of(problems.begin(), problems.end(), [&](const std::string& p) {
      return p.find(what) != std::string::npos && p.find(where) != std::string::npos;
    });
  };
  EXPECT_TRUE(named("\"spills over\"", "(panel left)"));
  EXPECT_TRUE(named("\"past the edge\"", "(the canvas)"));
  EXPECT_TRUE(named("\"past the edge\"", "(panel right)"));
  EXPECT_TRUE(named("\"loose\"", "is in no panel"));
  EXPECT_FALSE(named("\"fits\"", ""));
  EXPECT_EQ(problems.size(), 4U);
}

// The figure the core10 bundle was written with (kept as its SHA256SUMS hashes it) clipped its
// labels past 100% of the copy bandwidth at the canvas's right edge: the checker sees them.
TEST_F(PortfolioFigureDrawn, CheckerSeesTheOldFiguresClippedLabels) {
  const std::vector<std::string> problems = drawing_problems(
      read_file(fs::path(BLASTER_SOURCE_DIR) / "artifacts/core10-h200-v1/figure.svg"), dir_);
  const auto clipped = std::count_if(problems.begin(), problems.end(), [](const std::string& p) {
    return p.find("%\": ink over") != std::string::npos &&
           p.find("(the canvas)") != std::string::npos;
  });
  EXPECT_GE(clipped, 1) << (problems.empty() ? "no problems" : problems[0]);
}

// ---- The figure.

TEST_F(PortfolioFigureDrawn, Core10BundleIsDrawnInside) {
  expect_drawn_inside(render_portfolio_svg(load_core10()));
}

TEST_F(PortfolioFigureDrawn, ExtremesAreDrawnInside) {
  expect_drawn_inside(render_portfolio_svg(extremes()));
  expect_drawn_inside(render_portfolio_svg({{"rows", json::array()}}));
}

TEST_F(PortfolioFigureDrawn, NoPyTorchIsDrawnInside) {
  expect_drawn_inside(render_portfolio_svg(without_pytorch(extremes())));
  expect_drawn_inside(render_portfolio_svg(without_pytorch(load_core10())));
}

TEST(PortfolioFigure, IsPlainDeterministicSvg) {
  const json summary = load_core10();
  const std::string svg = render_portfolio_svg(summary);
  EXPECT_EQ(svg, render_portfolio_svg(summary));
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\"", 0), 0U);
  EXPECT_NE(svg.find("font-family=\"sans-serif\""), std::string::npos);
  for (const char* absent : {"<script", "href", "url(", "@font-face", "<style", "<foreignObject"}) {
    EXPECT_EQ(svg.find(absent), std::string::npos) << absent;
  }
  std::set<std::string> ids;
  for (std::size_t at = svg.find(" id=\""); at != std::string::npos;
       at = svg.find(" id=\"", at + 1)) {
    const std::size_t begin = at + 5;
    const std::string id = svg.substr(begin, svg.find('"', begin) - begin);
    EXPECT_TRUE(ids.insert(id).second) << "id " << id << " twice";
  }
}

// Against the faster PyTorch time, on a log axis from a marked 1.0x; the roofline where the case
// is bandwidth-bound, the empty kernel where it is launch-bound; the headline's mean.
TEST(PortfolioFigure, Core10SaysWhatItsSummarySays) {
  const json summary = load_core10();
  const figure f = read_figure(render_portfolio_svg(summary));
  ASSERT_TRUE(f.by_id.count("ratio-unity"));
  const std::string& unity = f.by_id.at("ratio-unity");
  const double unity_x = number(unity, "x1");
  EXPECT_EQ(number(unity, "x2"), unity_x);
  EXPECT_EQ(f.text_by_id.at("ratio-unity-label"), "1.0x");
  EXPECT_NEAR(number(f.by_id.at("ratio-unity-label"), "x"), unity_x, 0.1);

  std::vector<double> px_per_decade;
  std::vector<double> px_per_pct;
  double log_sum = 0;
  int with_pytorch = 0;
  const json& rows = summary.at("rows");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE(
        fmt::format("row {} {} {}", i, rows[i].value("task", ""), rows[i].value("case", "")));
    const json& row = rows[i];
    ASSERT_FALSE(row.at("best").is_null());
    const auto faster = faster_pytorch(row);
    ASSERT_TRUE(faster.has_value());
    log_sum += std::log(faster->first);
    ++with_pytorch;
    const std::string label = f.text_by_id.at(fmt::format("row{}-ratio", i));
    expect_label_near(label, faster->first);
    EXPECT_NE(label.find("vs " + faster->second), std::string::npos) << label;
    // The bar runs from 1.0x to the ratio, its length in proportion to the ratio's logarithm.
    const std::string& bar = f.by_id.at(fmt::format("row{}-bar", i));
    const double x = number(bar, "x");
    const double width = number(bar, "width");
    EXPECT_NEAR(faster->first >= 1 ? x : x + width, unity_x, 0.02) << bar;
    if (std::fabs(std::log10(faster->first)) > 0.02) {
      px_per_decade.push_back(width / std::fabs(std::log10(faster->first)));
    }

    const std::string limit = f.text_by_id.at(fmt::format("row{}-limit", i));
    if (launch_bound(row)) {
      EXPECT_NE(limit.find("x the empty kernel"), std::string::npos) << limit;
      EXPECT_EQ(limit.find('%'), std::string::npos) << limit;
      EXPECT_FALSE(f.by_id.count(fmt::format("row{}-roofline", i)));
      expect_label_near(limit, row.at("over_launch_floor").get<double>());
    } else {
      const double pct = 100.0 / row["best"].at("time_over_floor").get<double>();
      EXPECT_EQ(limit.back(), '%') << limit;
      EXPECT_NEAR(leading_number(limit), pct, 0.051) << limit;
      const std::string& roof = f.by_id.at(fmt::format("row{}-roofline", i));
      px_per_pct.push_back(number(roof, "width") / pct);
    }
  }
  // One scale for every bar: a log axis for the ratios, a linear one for the roofline.
  ASSERT_GE(px_per_decade.size(), 5U);
  const auto [low, high] = std::minmax_element(px_per_decade.begin(), px_per_decade.end());
  EXPECT_LT(*high / *low, 1.01) << *low << " to " << *high << " px a decade";
  ASSERT_GE(px_per_pct.size(), 5U);
  const auto [low_pct, high_pct] = std::minmax_element(px_per_pct.begin(), px_per_pct.end());
  EXPECT_LT(*high_pct / *low_pct, 1.001);
  // The 100% line where a bar of 100% would end.
  const std::string& full = f.by_id.at("roofline-full");
  const double zero_x = number(f.by_id.at("row0-roofline"), "x");
  EXPECT_NEAR(number(full, "x1"), zero_x + 100 * *low_pct, 0.05);

  const std::string headline = f.text_by_id.at("headline");
  const std::string lead = "blaster's best is ";
  ASSERT_EQ(headline.rfind(lead, 0), 0U) << headline;
  expect_label_near(headline.substr(lead.size()),
                    std::exp(log_sum / static_cast<double>(with_pytorch)));
  EXPECT_NE(headline.find("the faster of PyTorch eager and torch.compile"), std::string::npos);
  EXPECT_NE(headline.find(fmt::format("{} of {} cases", with_pytorch, rows.size())),
            std::string::npos)
      << headline;
}

TEST(PortfolioFigure, ExtremesSayWhatTheirSummarySays) {
  const figure f = read_figure(render_portfolio_svg(extremes()));
  const std::string pytorch_fill = attribute(f.by_id.at("legend-pytorch"), "fill");
  const std::string baseline_fill = attribute(f.by_id.at("legend-baseline"), "fill");
  EXPECT_NE(pytorch_fill, baseline_fill);
  EXPECT_NE(f.text_by_id.at("legend-baseline-text").find("no PyTorch time"), std::string::npos);
  // 500x over the baseline, without PyTorch: the baseline's colour, on the same log axis.
  EXPECT_EQ(f.text_by_id.at("row0-ratio"), "500x vs baseline");
  EXPECT_EQ(attribute(f.by_id.at("row0-bar"), "fill"), baseline_fill);
  // A ratio of 0.05: a bar left of 1.0x, of log10(0.05)/log10(500) the 500x bar's length.
  const double unity_x = number(f.by_id.at("ratio-unity"), "x1");
  const std::string& slow = f.by_id.at("row1-bar");
  EXPECT_EQ(attribute(slow, "fill"), pytorch_fill);
  EXPECT_NEAR(number(slow, "x") + number(slow, "width"), unity_x, 0.02);
  EXPECT_NEAR(number(slow, "width") / number(f.by_id.at("row0-bar"), "width"),
              std::log10(20.0) / std::log10(500.0), 0.002);
  EXPECT_EQ(f.text_by_id.at("row1-ratio"), "0.05x vs eager");
  // 180% of the roofline, to scale past the 100% line.
  const std::string& over = f.by_id.at("row2-roofline");
  const double full_x = number(f.by_id.at("roofline-full"), "x1");
  EXPECT_NEAR(number(over, "width") / (full_x - number(over, "x")), 1.8, 0.001);
  EXPECT_EQ(f.text_by_id.at("row2-limit"), "180.0%");
  EXPECT_EQ(f.text_by_id.at("row2-ratio"), "2.00x vs compile");
  // Its whiskers: the ratio times the speedup's interval over the speedup, on the same axis.
  const std::string& bar = f.by_id.at("row2-bar");
  const double px_per_decade = number(bar, "width") / std::log10(2.0);
  double low_x = 0;
  double high_x = 0;
  ASSERT_EQ(std::sscanf(attribute(f.by_id.at("row2-interval"), "d").c_str(), "M%lf %*f H%lf",
                        &low_x, &high_x),
            2);
  EXPECT_NEAR(low_x, unity_x + px_per_decade * std::log10(2.0 * 0.97), 0.02);
  EXPECT_NEAR(high_x, unity_x + px_per_decade * std::log10(2.0 * 1.02), 0.02);
  // The long name is written whole, the one with markup characters escaped.
  for (const char* name : {"a_forty_character_variant_name[X=1,Y=22]", "huge_vec<&>"}) {
    EXPECT_TRUE(std::any_of(f.texts.begin(), f.texts.end(), [&](const svg_text& t) {
      return t.content == name;
    })) << name;
  }
  // Nothing passed: said so, nothing drawn.
  EXPECT_EQ(f.text_by_id.at("row4-ratio"), "none passed");
  EXPECT_FALSE(f.by_id.count("row4-bar"));
  EXPECT_FALSE(f.text_by_id.count("row4-limit"));
  // Launch-bound, in graph mode and marked so in hot mode: the empty kernel, no percentage.
  EXPECT_EQ(f.text_by_id.at("row5-limit"), "2.14x the empty kernel");
  EXPECT_FALSE(f.by_id.count("row5-roofline"));
  EXPECT_EQ(f.text_by_id.at("row6-limit"), "2.50x the empty kernel");
  EXPECT_FALSE(f.by_id.count("row6-roofline"));
  EXPECT_EQ(f.text_by_id.at("row6-ratio"), "0.900x vs compile");
}

TEST(PortfolioFigure, WithoutPyTorchSaysSo) {
  const figure f = read_figure(render_portfolio_svg(without_pytorch(extremes())));
  const std::string headline = f.text_by_id.at("headline");
  EXPECT_NE(headline.find("no PyTorch times"), std::string::npos) << headline;
  EXPECT_EQ(headline.find("the faster of PyTorch"), std::string::npos) << headline;
  EXPECT_FALSE(f.by_id.count("legend-pytorch"));
  const std::string baseline_fill = attribute(f.by_id.at("legend-baseline"), "fill");
  for (int i : {0, 1, 2, 3, 5, 6}) {
    const std::string bar = f.by_id.at(fmt::format("row{}-bar", i));
    EXPECT_EQ(attribute(bar, "fill"), baseline_fill) << bar;
    EXPECT_NE(f.text_by_id.at(fmt::format("row{}-ratio", i)).find("vs baseline"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace blaster
