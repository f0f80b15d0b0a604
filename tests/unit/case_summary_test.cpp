// `bench --cases`: each variant's speedups over the timed cases and their weighted geometric
// mean, from one report per case; and the weight a case takes from task.json.
#include "benchmarking/report/case_summary.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {
namespace {

variant_result result(const std::string& label, std::optional<double> speedup,
                      reason_code reason = reason_code::none) {
  variant_result r;
  r.label = label;
  r.status = reason == reason_code::none ? "passed" : "rejected";
  r.reason = reason;
  r.speedup = speedup;
  return r;
}

bench_report report(std::vector<variant_result> results) {
  bench_report r;
  r.results = std::move(results);
  return r;
}

TEST(WeightedGeometricMean, WeightsCountAsRepeats) {
  // 2 weighted 3 against 8 weighted 1: the plain geometric mean of 2, 2, 2, 8.
  EXPECT_NEAR(weighted_geometric_mean({2.0, 8.0}, {3.0, 1.0}), std::pow(64.0, 0.25), 1e-12);
  EXPECT_DOUBLE_EQ(weighted_geometric_mean({1.5}, {0.2}), 1.5);
  EXPECT_THROW(static_cast<void>(weighted_geometric_mean({1.0, -2.0}, {1.0, 1.0})), input_error);
  EXPECT_THROW(static_cast<void>(weighted_geometric_mean({1.0}, {1.0, 1.0})), input_error);
}

TEST(CaseSummary, AVariantThatPassedEveryCaseGetsTheWeightedMean) {
  const std::vector<timed_case> cases = {{.name = "t1", .weight = 3.0},
                                         {.name = "t8192", .weight = 1.0}};
  const auto summary = summarize_cases(
      cases, {report({result("init", 1.0), result("fast[A=1]", 2.0), result("odd[A=2]", 0.5)}),
              report({result("init", 1.0), result("fast[A=1]", 8.0),
                      result("odd[A=2]", std::nullopt, reason_code::wrong_result)})});
  ASSERT_EQ(summary.size(), 3U);
  EXPECT_EQ(summary[0].label, "init");
  EXPECT_DOUBLE_EQ(*summary[0].mean, 1.0);
  EXPECT_EQ(summary[1].label, "fast[A=1]");
  EXPECT_NEAR(*summary[1].mean, std::pow(64.0, 0.25), 1e-12);
  EXPECT_EQ(summary[1].speedups, (std::vector<std::optional<double>>{2.0, 8.0}));
  // Rejected on one case: no mean, and the reason says where.
  EXPECT_FALSE(summary[2].mean.has_value());
  EXPECT_EQ(summary[2].speedups[0], 0.5);
  EXPECT_FALSE(summary[2].speedups[1].has_value());
  EXPECT_NE(summary[2].why.find("t8192"), std::string::npos) << summary[2].why;
  EXPECT_NE(summary[2].why.find("wrong_result"), std::string::npos) << summary[2].why;
}

TEST(CaseSummary, AVariantMissingFromACasesRunHasNoMean) {
  const auto summary = summarize_cases({{.name = "a", .weight = 1.0}, {.name = "b", .weight = 1.0}},
                                       {report({result("x", 2.0)}), report({})});
  ASSERT_EQ(summary.size(), 1U);
  EXPECT_FALSE(summary[0].mean.has_value());
  EXPECT_NE(summary[0].why.find("b"), std::string::npos) << summary[0].why;
  const auto lines =
      case_summary_lines({{.name = "a", .weight = 1.0}, {.name = "b", .weight = 1.0}}, summary);
  ASSERT_EQ(lines.size(), 3U);
  EXPECT_NE(lines[2].find("2.00x"), std::string::npos) << lines[2];
}

TEST(CaseSummary, ATunedCandidateIsOneRowThoughEachCaseRanAnotherConfiguration) {
  auto tuned = [](const std::string& label, double speedup, std::int64_t size) {
    variant_result r = result(label, speedup);
    r.candidate = "fast";
    r.tuned = tuned_choice{.file = "t.json", .sha256 = "", .size_symbol = "T", .size = size};
    return r;
  };
  const std::vector<timed_case> cases = {{.name = "t1", .weight = 1.0},
                                         {.name = "t8192", .weight = 1.0}};
  const auto summary =
      summarize_cases(cases, {report({result("init", 1.0), tuned("fast[A=4]", 2.0, 1)}),
                              report({result("init", 1.0), tuned("fast[A=1]", 8.0, 8192)})});
  ASSERT_EQ(summary.size(), 2U);
  EXPECT_EQ(summary[1].label, "fast (tuned)");
  EXPECT_NEAR(*summary[1].mean, 4.0, 1e-12);
}

TEST(CaseSummary, JsonCarriesEveryCaseAndMean) {
  const std::vector<timed_case> cases = {{.name = "t1", .weight = 2.0}};
  const auto j = to_json(cases, summarize_cases(cases, {report({result("x", 1.25)})}));
  EXPECT_EQ(j.at("cases")[0].at("weight"), 2.0);
  EXPECT_EQ(j.at("variants")[0].at("speedups")[0], 1.25);
  EXPECT_EQ(j.at("variants")[0].at("weighted_geometric_mean"), 1.25);
}

TEST(CaseWeight, DefaultsToOneAndMustBePositive) {
  const task_spec task =
      load_task(std::filesystem::path(BLASTER_SOURCE_DIR) / "tasks" / "rms_norm");
  for (const auto& c : task.cases) EXPECT_EQ(c.weight, 1.0) << c.name;

  const auto dir = std::filesystem::temp_directory_path() /
                   ("blaster-case-weight-" + std::to_string(::getpid())) / "rms_norm";
  std::filesystem::create_directories(dir);
  auto with_weight = [&](const std::string& weight) {
    std::ifstream in(std::filesystem::path(BLASTER_SOURCE_DIR) / "tasks" / "rms_norm" /
                     "task.json");
    std::string text((std::istreambuf_iterator<char>(in)), {});
    const std::string key = "{\"name\": \"t1024\",";
    text.replace(text.find(key), key.size(), "{\"name\": \"t1024\", \"weight\": " + weight + ",");
    std::ofstream(dir / "task.json") << text;
    return load_task(dir);
  };
  EXPECT_EQ(with_weight("4.5").find_case("t1024").weight, 4.5);
  try {
    static_cast<void>(with_weight("0"));
    FAIL() << "a weight of 0 was taken";
  } catch (const input_error& e) {
    EXPECT_NE(std::string(e.what()).find("cases[1].weight"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("task.json"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir.parent_path());
}

}  // namespace
}  // namespace blaster
