// The portfolio's figure as a renderer draws it. rsvg-convert (Debian's librsvg2-bin) renders
// the SVG with its own fonts into a canvas with a margin around the figure's, png_ink.py finds
// where ink fell, and every text must lie inside the canvas and inside its panel: on the
// checked-in core10 bundle and on summaries with extreme values. The figure must also say what
// the summary says: the ratio to the faster PyTorch method on a log axis with 1.0x marked, and

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/file_io.hpp"
#include "figure_checker.hpp"
#include "portfolio/portfolio_figure.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace blaster::testing;

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
