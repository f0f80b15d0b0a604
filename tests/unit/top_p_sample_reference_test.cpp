// Nucleus sampling's float64 reference on probabilities worked out by hand: the nucleus, the
// sample, and the alternative a row takes where u or p lies on a boundary between two tokens.
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "benchmarking/gate/gate_data.hpp"
#include "tasks/reference.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {
namespace {

struct sampled {
  double token;
  double alternative;  // NaN: none
};

sampled run(const std::vector<double>& logits, double p, double u) {
  const task_spec task = load_task(std::string(BLASTER_SOURCE_DIR) + "/tasks/top_p_sample");
  const task_case c{.name = "hand",
                    .note = "",
                    .values = {{"T", 1}, {"V", static_cast<double>(logits.size())}, {"p", p}}};
  const std::vector<double> draw = {u};
  std::vector<double> token = {-1.0};
  std::vector<double> alternative = {std::numeric_limits<double>::quiet_NaN()};
  reference_context io{.task = task, .which = c, .inputs = {}, .outputs = {}};
  io.inputs.emplace("logits", logits);
  io.inputs.emplace("u", draw);
  io.outputs.emplace("token", token);
  io.alternatives.emplace("token", alternative);
  find_reference(task.reference)(io);
  return {token[0], alternative[0]};
}

// Logits log(1, 4, 2, 1): probabilities 1/8, 1/2, 1/4, 1/8, so the order is ids 1, 2, 0, 3 (the
// tie in id order) with running sums 1/2, 3/4, 7/8, 1.
sampled run(double p, double u) { return run({0.0, std::log(4.0), std::log(2.0), 0.0}, p, u); }

TEST(TopPSampleReference, TheFirstNucleusTokenWhoseRunningSumExceedsUTimesTheNucleus) {
  // p = 0.8: the nucleus is ids 1, 2, 0 (7/8 is the first sum to reach it).
  EXPECT_EQ(run(0.8, 0.5).token, 1.0);  // threshold 7/16 < 1/2
  EXPECT_EQ(run(0.8, 0.6).token, 2.0);  // 0.525 < 3/4
  EXPECT_EQ(run(0.8, 0.9).token, 0.0);  // 0.7875 < 7/8
  EXPECT_EQ(run(0.8, 0.0).token, 1.0);
  EXPECT_TRUE(std::isnan(run(0.8, 0.6).alternative)) << "far from every boundary";
  // p = 0.9: every token; id 3 comes last among the tie.
  EXPECT_EQ(run(0.9, 0.95).token, 3.0);
  EXPECT_EQ(run(0.9, 0.999).token, 3.0);
}

TEST(TopPSampleReference, AThresholdOnARunningSumAllowsTheTokenAcrossIt) {
  // u = 4/7 puts the threshold at exactly 1/2, the first running sum: not exceeded there, so id 2,
  // and a kernel whose sum of the first token came out a little above 1/2 picks id 1.
  const sampled s = run(0.8, 4.0 / 7.0);
  EXPECT_EQ(s.token, 2.0);
  EXPECT_EQ(s.alternative, 1.0);
  // Just below it, the other way round.
  const sampled below = run(0.8, 4.0 / 7.0 - 1e-6);
  EXPECT_EQ(below.token, 1.0);
  EXPECT_EQ(below.alternative, 2.0);
}

TEST(TopPSampleReference, POnARunningSumAllowsTheOtherNucleussSample) {
  // p = 3/4 is the second running sum: the nucleus is ids 1, 2 (mass 3/4), or with one rounding
  // step more ids 1, 2, 0 (mass 7/8). u = 0.9 samples id 2 from the first (0.675 < 3/4) and
  // id 0 from the second (0.7875 > 3/4).
  const sampled s = run(0.75, 0.9);
  EXPECT_EQ(s.token, 2.0);
  EXPECT_EQ(s.alternative, 0.0);
}

// Probabilities 1/2, 1/4 and 2^14 tokens of e = 2^-16 (as at the end of a 128256-token nucleus):
// running sums 1/2, 3/4, then 3/4 + j e for token j + 1. Every boundary lies within reach of
// another, and a kernel's fp32 sum strays across the nearest one.
TEST(TopPSampleReference, WhereSeveralBoundariesLieNearTheThresholdTheNearestOneCounts) {
  constexpr double e = 1.0 / 65536.0;
  std::vector<double> logits(2 + 16384, 0.0);
  logits[0] = 15.0 * std::log(2.0);
  logits[1] = 14.0 * std::log(2.0);
  // p = 7/8 + e/2, between two running sums: the nucleus ends at token 2^13 + 2, mass 7/8 + e.
  const double p = 0.875 + e / 2.0;
  const double mass = 0.875 + e;
  // The threshold a quarter step above 13/16, the running sum at token 4097: the sample is token
  // 4098 (its sum 13/16 + e is the first above), and the boundary a quarter step below is nearer
  // than the one three quarters above, and nearer than p's half steps.
  const sampled low = run(logits, p, (0.8125 + e / 4.0) / mass);
  EXPECT_EQ(low.token, 4098.0);
  EXPECT_EQ(low.alternative, 4097.0);
  // Three quarters above: the boundary above is the nearer.
  const sampled high = run(logits, p, (0.8125 + 3.0 * e / 4.0) / mass);
  EXPECT_EQ(high.token, 4098.0);
  EXPECT_EQ(high.alternative, 4099.0);
}

// The gate hands the reference an alternative per element of an integer output, NaN unless the
// reference sets it, and keeps none for a floating-point one.
TEST(TopPSampleReference, TheGateKeepsAnAlternativePerElementOfAnIntegerOutput) {
  task_spec task = load_task(std::string(BLASTER_SOURCE_DIR) + "/tasks/top_p_sample");
  std::erase_if(task.cases, [](const task_case& c) { return c.name != "ties" && c.name != "odd"; });
  const auto dir =
      std::filesystem::temp_directory_path() / ("blaster-top-p-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    const gate_data data(task, find_reference(task.reference), gate_seeds(5), dir, {"odd"});
    for (std::size_t i = 0; i < data.checks().size(); ++i) {
      const auto expected = data.expected(i, 0);
      const auto alternatives = data.alternatives(i, 0);
      ASSERT_EQ(alternatives.size(), expected.size());
      for (std::size_t e = 0; e < expected.size(); ++e) {
        if (std::isnan(alternatives[e])) continue;
        EXPECT_NE(alternatives[e], expected[e]) << "an alternative is another token";
        EXPECT_GE(alternatives[e], 0.0);
      }
    }
  }
  task_spec norm = load_task(std::string(BLASTER_SOURCE_DIR) + "/tasks/rms_norm");
  std::erase_if(norm.cases, [](const task_case& c) { return c.name != "odd"; });
  const gate_data floats(norm, find_reference(norm.reference), gate_seeds(5), dir, {"odd"});
  EXPECT_TRUE(floats.alternatives(0, 0).empty());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace blaster
