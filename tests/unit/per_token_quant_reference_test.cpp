#include <gtest/gtest.h>

#include <span>
#include <vector>

#include "core/dtype.hpp"
#include "tasks/reference.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {
namespace {

// The reference on tokens worked out by hand, on the real task.json: a scale is the token's
// absolute maximum over 448, never below 1 / (448 * 512).
class PerTokenQuantReference : public ::testing::Test {
 protected:
  void SetUp() override { task_ = load_task(BLASTER_SOURCE_DIR "/tasks/per_token_quant"); }

  void run(double tokens, double hidden, const std::vector<double>& x) {
    q_.assign(x.size(), -12345.0);  // values the reference must overwrite
    scale_.assign(static_cast<std::size_t>(tokens), -12345.0);
    const task_case c{.name = "hand", .note = "", .values = {{"T", tokens}, {"H", hidden}}};
    const reference_context io{
        .task = task_,
        .which = c,
        .inputs = {{"x", std::span<const double>(x)}},
        .outputs = {{"q", std::span<double>(q_)}, {"scale", std::span<double>(scale_)}}};
    find_reference(task_.reference)(io);
  }

  task_spec task_;
  std::vector<double> q_;
  std::vector<double> scale_;
};

TEST_F(PerTokenQuantReference, TheTokensMaximumMapsTo448) {
  run(1, 4, {1.0, -2.0, 0.5, 4.0});
  ASSERT_EQ(scale_.size(), 1U);
  EXPECT_DOUBLE_EQ(scale_[0], 4.0 / 448.0);
  EXPECT_DOUBLE_EQ(q_[0], 112.0);
  EXPECT_DOUBLE_EQ(q_[1], -224.0);
  EXPECT_DOUBLE_EQ(q_[2], 56.0);
  EXPECT_DOUBLE_EQ(q_[3], 448.0);
  // Each is a value of the format: a kernel stores exactly these.
  for (double v : q_) EXPECT_EQ(stored_value(dtype::fp8_e4m3, v), v);
}

TEST_F(PerTokenQuantReference, EachTokenHasItsOwnScaleAndTheFloorKeepsZerosFinite) {
  run(3, 2, {0.0, 0.0, 1e-6, -5e-7, 3.0, -6.0});
  const double floor = 1.0 / (448.0 * 512.0);
  EXPECT_DOUBLE_EQ(scale_[0], floor);
  EXPECT_EQ(q_[0], 0.0);
  EXPECT_EQ(q_[1], 0.0);
  EXPECT_DOUBLE_EQ(scale_[1], floor) << "1e-6 / 448 is below the floor";
  EXPECT_DOUBLE_EQ(q_[2], 1e-6 * 448.0 * 512.0);
  EXPECT_DOUBLE_EQ(q_[3], -5e-7 * 448.0 * 512.0);
  EXPECT_DOUBLE_EQ(scale_[2], 6.0 / 448.0);
  EXPECT_DOUBLE_EQ(q_[4], 224.0);
  EXPECT_DOUBLE_EQ(q_[5], -448.0);
}

TEST_F(PerTokenQuantReference, OutputsAreTheQuantizedFormatAndAFloatScale) {
  EXPECT_EQ(task_.find_buffer("q")->type, dtype::fp8_e4m3);
  EXPECT_EQ(task_.find_buffer("scale")->type, dtype::f32);
  EXPECT_EQ(task_.canonical().name, "t8192");
}

}  // namespace
}  // namespace blaster
