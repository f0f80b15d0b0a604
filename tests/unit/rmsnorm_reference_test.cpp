#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "tasks/reference.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {
namespace {

// The reference is the ground truth every candidate is judged against, so it is checked here
// against values worked out by hand, on the real task.json.
class RmsnormReference : public ::testing::Test {
 protected:
  void SetUp() override { task_ = load_task(BLASTER_SOURCE_DIR "/tasks/rmsnorm"); }

  // Runs the registered reference on x laid out as [B, C, H, W]; returns out in the same layout.
  std::vector<double> run(const task_case& c, const std::vector<double>& x) const {
    std::vector<double> out(x.size(), -12345.0);  // a value the reference must overwrite
    const reference_context io{.task = task_,
                               .which = c,
                               .inputs = {{"x", std::span<const double>(x)}},
                               .outputs = {{"out", std::span<double>(out)}}};
    find_reference(task_.reference)(io);
    return out;
  }

  static task_case make_case(double b, double c, double h, double w) {
    return task_case{
        .name = "hand", .note = "", .values = {{"B", b}, {"C", c}, {"H", h}, {"W", w}}};
  }

  task_spec task_;
};

TEST_F(RmsnormReference, TaskNamesTheRegisteredReference) {
  EXPECT_EQ(task_.reference, "rmsnorm");
  EXPECT_NE(find_reference("rmsnorm"), nullptr);
}

TEST_F(RmsnormReference, NormalizesOverChannelsAtEachPosition) {
  // B=1, C=2, H=1, W=2: x[c*2 + p]. Position 0 holds channels (3, 4): mean square
  // (9 + 16) / 2 = 12.5. Position 1 holds (1, -1): mean square 1. eps is the default 1e-5.
  const task_case c = make_case(1, 2, 1, 2);
  const std::vector<double> x = {3.0, 1.0, 4.0, -1.0};
  const std::vector<double> out = run(c, x);
  const double s0 = std::sqrt(12.5 + 1e-5);
  const double s1 = std::sqrt(1.0 + 1e-5);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_NEAR(out[0], 3.0 / s0, 1e-12);
  EXPECT_NEAR(out[2], 4.0 / s0, 1e-12);
  EXPECT_NEAR(out[1], 1.0 / s1, 1e-12);
  EXPECT_NEAR(out[3], -1.0 / s1, 1e-12);
}

TEST_F(RmsnormReference, BatchesAreNormalizedIndependently) {
  // B=2, C=2, H=1, W=1: x[b*2 + c]. Batch 0 is (3, 4), mean square 12.5; batch 1 is (6, 8),
  // mean square 50. A wrong batch stride would mix the two.
  const task_case c = make_case(2, 2, 1, 1);
  const std::vector<double> x = {3.0, 4.0, 6.0, 8.0};
  const std::vector<double> out = run(c, x);
  const double s0 = std::sqrt(12.5 + 1e-5);
  const double s1 = std::sqrt(50.0 + 1e-5);
  EXPECT_NEAR(out[0], 3.0 / s0, 1e-12);
  EXPECT_NEAR(out[1], 4.0 / s0, 1e-12);
  EXPECT_NEAR(out[2], 6.0 / s1, 1e-12);
  EXPECT_NEAR(out[3], 8.0 / s1, 1e-12);
}

TEST_F(RmsnormReference, BatchesWithSeveralPositions) {
  // B=2, C=2, H=1, W=2: x[b*4 + c*2 + p]; each (b, p) pair is its own row of two channels.
  const task_case c = make_case(2, 2, 1, 2);
  //                            b0c0p0 b0c0p1 b0c1p0 b0c1p1 b1c0p0 b1c0p1 b1c1p0 b1c1p1
  const std::vector<double> x = {3.0, 0.0, 4.0, 2.0, 6.0, 1.0, 8.0, 1.0};
  const std::vector<double> out = run(c, x);
  const double b0p0 = std::sqrt(12.5 + 1e-5);
  const double b0p1 = std::sqrt(2.0 + 1e-5);  // (0 + 4) / 2
  const double b1p0 = std::sqrt(50.0 + 1e-5);
  const double b1p1 = std::sqrt(1.0 + 1e-5);
  const std::vector<double> want = {3.0 / b0p0, 0.0,        4.0 / b0p0, 2.0 / b0p1,
                                    6.0 / b1p0, 1.0 / b1p1, 8.0 / b1p0, 1.0 / b1p1};
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(out[i], want[i], 1e-12) << i;
}

TEST_F(RmsnormReference, OneChannelDividesByItsOwnMagnitude) {
  // C=1: the mean square is x^2, so out = x / sqrt(x^2 + eps); zero stays zero.
  const task_case c = make_case(1, 1, 1, 3);
  const std::vector<double> x = {2.0, -0.5, 0.0};
  const std::vector<double> out = run(c, x);
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(out[i], x[i] / std::sqrt(x[i] * x[i] + 1e-5), 1e-12) << i;
  }
  EXPECT_EQ(out[2], 0.0);
}

TEST_F(RmsnormReference, ReadsEpsFromTheCase) {
  // A case may override the default eps; with eps = 0.5 the result differs visibly.
  task_case c = make_case(1, 2, 1, 1);
  c.values["eps"] = 0.5;
  const std::vector<double> out = run(c, {3.0, 4.0});
  EXPECT_NEAR(out[0], 3.0 / std::sqrt(13.0), 1e-12);
  EXPECT_NEAR(out[1], 4.0 / std::sqrt(13.0), 1e-12);
}

TEST_F(RmsnormReference, LargeCaseMatchesASerialLoop) {
  // The reference splits positions across threads; every position must still be normalized.
  const task_case c = make_case(3, 5, 17, 13);
  const std::size_t plane = 17 * 13;
  std::vector<double> x(3 * 5 * plane);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<double>(i)) * 3.0;
  const std::vector<double> out = run(c, x);
  for (std::size_t b = 0; b < 3; ++b) {
    for (std::size_t p = 0; p < plane; ++p) {
      double sum = 0.0;
      for (std::size_t ch = 0; ch < 5; ++ch) sum += std::pow(x[(b * 5 + ch) * plane + p], 2);
      const double scale = std::sqrt(sum / 5.0 + 1e-5);
      for (std::size_t ch = 0; ch < 5; ++ch) {
        const std::size_t i = (b * 5 + ch) * plane + p;
        ASSERT_NEAR(out[i], x[i] / scale, 1e-12) << i;
      }
    }
  }
}

TEST(FindReference, UnknownNameListsTheRegisteredOnes) {
  try {
    static_cast<void>(find_reference("nope"));
    FAIL() << "find_reference(\"nope\") returned";
  } catch (const input_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("\"nope\""), std::string::npos) << message;
    EXPECT_NE(message.find("rmsnorm"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace blaster
