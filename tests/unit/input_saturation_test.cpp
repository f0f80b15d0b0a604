// Inputs a task can really hold: the fraction of draws a storage type clips, worked out by hand,
// and the task checks that warn about it or refuse the task.
#include "tasks/input_saturation.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <numbers>
#include <string>

#include <nlohmann/json.hpp>

#include "task_spec_fixture.hpp"

namespace blaster {
namespace {

using namespace blaster::testing;
namespace fs = std::filesystem;

distribution normal(double mean, double stddev) {
  distribution d;
  d.kind = "normal";
  d.mean = mean;
  d.stddev = stddev;
  return d;
}

distribution uniform(double low, double high) {
  distribution d;
  d.kind = "uniform";
  d.low = low;
  d.high = high;
  return d;
}

distribution heavy_tailed(double dof, double scale) {
  distribution d;
  d.kind = "heavy_tailed";
  d.dof = dof;
  d.scale = scale;
  return d;
}

distribution integers(double low, double high) {
  distribution d;
  d.kind = "int_range";
  d.low = low;
  d.high = high;
  return d;
}

TEST(InputSaturation, IntegersOutsideI8AreCounted) {
  // [-1000, 1000] holds 2001 integers; i8 holds the 256 of [-128, 127]: 1745 clip.
  EXPECT_DOUBLE_EQ(saturated_fraction(dtype::i8, integers(-1000, 1000)), 1745.0 / 2001.0);
  EXPECT_DOUBLE_EQ(saturated_fraction(dtype::i8, integers(-128, 127)), 0.0);
  EXPECT_DOUBLE_EQ(saturated_fraction(dtype::i8, integers(0, 255)), 128.0 / 256.0);
  EXPECT_DOUBLE_EQ(saturated_fraction(dtype::i8, integers(200, 300)), 1.0);
  // An index into a vocabulary fits i32 but not i8.
  EXPECT_DOUBLE_EQ(saturated_fraction(dtype::i32, integers(0, 128255)), 0.0);
  EXPECT_DOUBLE_EQ(saturated_fraction(dtype::i32, integers(0, 4294967295.0)), 0.5);
}

TEST(InputSaturation, NormalDrawsBeyondTheLargestFiniteValue) {
  // fp8 e4m3 holds up to 448: a std of 1e6 puts all but 448/1e6 * sqrt(2/pi) of the draws past it.
  const double tiny = 448.0 / 1e6 * std::sqrt(2.0 / std::numbers::pi);
  EXPECT_NEAR(saturated_fraction(dtype::fp8_e4m3, normal(0, 1e6)), 1.0 - tiny, 1e-7);
  // Two standard deviations each side: erfc(2 / sqrt 2) = 0.0455003.
  EXPECT_NEAR(saturated_fraction(dtype::fp8_e4m3, normal(0, 224)), 0.0455003, 1e-6);
  EXPECT_NEAR(saturated_fraction(dtype::fp8_e5m2, normal(0, 28672)), 0.0455003, 1e-6);
  EXPECT_NEAR(saturated_fraction(dtype::f16, normal(0, 32752)), 0.0455003, 1e-6);
  // Half the draws of a mean at the largest value lie above it.
  EXPECT_NEAR(saturated_fraction(dtype::f16, normal(65504, 1)), 0.5, 1e-12);
  EXPECT_DOUBLE_EQ(saturated_fraction(dtype::f16, normal(0, 1)), 0.0);
  EXPECT_DOUBLE_EQ(saturated_fraction(dtype::fp8_e4m3, normal(500, 0)), 1.0);
  // i8 rounds first: a draw below 127.5 stores as 127, not clipped.
  EXPECT_NEAR(saturated_fraction(dtype::i8, normal(127.5, 3)), 0.5, 1e-12);
}

TEST(InputSaturation, UniformDrawsAreMeasuredByLength) {
  // [-1000, 1000) against 448 each side: (552 + 552) / 2000.
  EXPECT_DOUBLE_EQ(saturated_fraction(dtype::fp8_e4m3, uniform(-1000, 1000)), 0.552);
  EXPECT_DOUBLE_EQ(saturated_fraction(dtype::fp8_e4m3, uniform(-448, 448)), 0.0);
  // Bounds near the largest double do not overflow the width.
  EXPECT_NEAR(saturated_fraction(dtype::f32, uniform(-1.7e308, 1.7e308)), 1.0, 1e-12);
}

TEST(InputSaturation, HeavyTailsFollowStudentsT) {
  // Cauchy (1 degree of freedom): P(|X| > t) = (2 / pi) atan(1 / t).
  const double cauchy = 2.0 / std::numbers::pi * std::atan(1.0 / 65504.0);
  EXPECT_NEAR(saturated_fraction(dtype::f16, heavy_tailed(1, 1)) / cauchy, 1.0, 1e-9);
  EXPECT_NEAR(saturated_fraction(dtype::fp8_e4m3, heavy_tailed(1, 448)), 0.5, 1e-12);
  // Two degrees of freedom: P(T > t) = (1 - t / sqrt(2 + t^2)) / 2, at t = 1 both sides.
  EXPECT_NEAR(saturated_fraction(dtype::f16, heavy_tailed(2, 65504)), 1.0 - 1.0 / std::sqrt(3.0),
              1e-12);
  // Three: P(T > 2) = 1/2 - (2 / (sqrt 3 * 7/3) + atan(2 / sqrt 3)) / pi = 0.0696630, both sides.
  EXPECT_NEAR(saturated_fraction(dtype::fp8_e5m2, heavy_tailed(3, 28672)), 2 * 0.0696630, 1e-6);
  // A bf16 heavy tail scaled to 1e300: every draw is beyond 3.4e38, none lost to rounding.
  EXPECT_DOUBLE_EQ(saturated_fraction(dtype::bf16, heavy_tailed(3, 1e300)), 1.0);
  // Huge thresholds, where t^2 overflows a double: the tail of 0.5 degrees of freedom decays as
  // 2 c t^-0.5, c = Gamma(3/4) / (sqrt(pi / 2) Gamma(1/4)) 0.5^-0.25: 3.477e-20 past f32's max.
  EXPECT_NEAR(saturated_fraction(dtype::f32, heavy_tailed(0.5, 1)) / 3.477047e-20, 1.0, 1e-5);
  EXPECT_LT(saturated_fraction(dtype::f64, heavy_tailed(0.5, 1)), 1e-150);
}

class TaskSpecSaturation : public TaskSpecFile {
 protected:
  // The fixture's task with x stored as `dtype` and drawn from `init`.
  static json with_input(const std::string& dtype, const json& init) {
    json j = valid();
    j["buffers"]["x"]["dtype"] = dtype;
    j["buffers"]["x"]["init"] = init;
    return j;
  }
};

TEST_F(TaskSpecSaturation, AnI8InputDrawnFromAThousandIsRefused) {
  write(with_input("i8", {{"dist", "int_range"}, {"low", -1000}, {"high", 1000}}).dump());
  refused({"buffers.x.init", "in case main", "87.2% of the draws of int_range [-1000, 1000] for x",
           "i8", "([-128, 127])", "clipped", "draw x from integers that i8 holds"});
}

TEST_F(TaskSpecSaturation, AnFp8InputOfStdAMillionIsRefused) {
  write(with_input("fp8_e4m3", {{"dist", "normal"}, {"mean", 0}, {"std", 1e6}}).dump());
  refused({"buffers.x.init", "100% of the draws of normal(mean 0, std 1e+06) for x", "fp8_e4m3",
           "scale x's distribution into [-448, 448]"});
}

TEST_F(TaskSpecSaturation, ABf16HeavyTailScaledTo1e300IsRefused) {
  write(with_input("bf16", {{"dist", "heavy_tailed"}, {"dof", 3}, {"scale", 1e300}}).dump());
  refused({"buffers.x.init", "heavy_tailed(dof 3, scale 1e+300)", "bf16", "overflow to infinity"});
}

TEST_F(TaskSpecSaturation, ACaseOfItsOwnThatClipsIsRefusedAtItsKey) {
  json j = valid();
  j["buffers"]["x"]["dtype"] = "f16";
  j["cases"][1]["init"] = {{"x", {{"dist", "uniform"}, {"low", -1e6}, {"high", 1e6}}}};
  write(j.dump());
  refused({"cases[1].init.x", "in case small", "93.4% of the draws of uniform [-1e+06, 1e+06)"});
}

TEST_F(TaskSpecSaturation, BoundsThatReachPastTheTypeAtTheLargestSizesAreRefused) {
  // x holds integers [0, N] in i8: fine in both cases (N = 8 and 1), but N may be drawn up to
  // 1000, where 873 of the 1001 values clip.
  json j = with_input("i8", {{"dist", "int_range"}, {"low", 0}, {"high", "N"}});
  j["symbols"]["N"]["range"] = {{"min", 1}, {"max", 1000}};
  j["drawn"] = {{"max_bytes", 1 << 20}};
  write(j.dump());
  refused({"buffers.x.init", "in case the largest sizes the ranges allow", "87.2%"});
  j["symbols"]["N"]["range"]["max"] = 127;
  write(j.dump());
  EXPECT_NO_THROW(static_cast<void>(load_task(dir_)));
}

TEST_F(TaskSpecSaturation, AFewDrawsThatClipWarnButLoad) {
  // f16 of std 30000: 2.9% of the draws are past 65504 and drawn again.
  write(with_input("f16", {{"dist", "normal"}, {"mean", 0}, {"std", 30000}}).dump());
  const task_spec task = load_task(dir_);
  const auto warnings = input_saturation_warnings(task);
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_NE(warnings[0].find("task t: buffers.x.init: in case main, 2.9% of the draws"),
            std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[0].find("scale x's distribution into [-65504, 65504]"), std::string::npos);
  // Within the type: no warning.
  write(with_input("f16", {{"dist", "normal"}, {"mean", 0}, {"std", 3000}}).dump());
  EXPECT_TRUE(input_saturation_warnings(load_task(dir_)).empty());
}

TEST(InputSaturation, EveryCheckedInTaskHoldsItsInputs) {
  // cross_entropy's Cauchy logits pass 65504 in 1e-5 of their draws: below the warning.
  for (const auto& entry : fs::directory_iterator(fs::path(BLASTER_SOURCE_DIR) / "tasks")) {
    if (!fs::exists(entry.path() / "task.json")) continue;
    const task_spec task = load_task(entry.path());
    EXPECT_TRUE(input_saturation_warnings(task).empty())
        << task.name << ": " << input_saturation_warnings(task).front();
  }
}

}  // namespace
}  // namespace blaster
