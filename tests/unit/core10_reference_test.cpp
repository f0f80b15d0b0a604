#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "tasks/reference.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {
namespace {

// The references of the core10 suite, checked against values worked out by hand on the real
// task.json files: a reference is the ground truth every candidate is judged against.

// Runs the task's registered reference on input x; out has `outputs` elements.
std::vector<double> run(const task_spec& task, const task_case& c, const std::vector<double>& x,
                        std::size_t outputs) {
  std::vector<double> out(outputs, -12345.0);  // a value the reference must overwrite
  const reference_context io{.task = task,
                             .which = c,
                             .inputs = {{"x", std::span<const double>(x)}},
                             .outputs = {{"out", std::span<double>(out)}}};
  find_reference(task.reference)(io);
  return out;
}

task_case rows(double b, double d) {
  return task_case{.name = "hand", .note = "", .values = {{"B", b}, {"D", d}}};
}

void expect_all_near(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << i;
}

TEST(Core10Reference, EveryTaskNamesItsRegisteredReference) {
  for (const char* name : {"relu", "gelu", "newgelu", "sum_dim1"}) {
    const task_spec task = load_task(std::string(BLASTER_SOURCE_DIR "/tasks/") + name);
    EXPECT_EQ(task.reference, name);
    EXPECT_NE(find_reference(task.reference), nullptr) << name;
  }
}

TEST(Core10Reference, ReluZeroesTheNegatives) {
  const task_spec task = load_task(BLASTER_SOURCE_DIR "/tasks/relu");
  // B=2, D=3: max(x, 0) elementwise; zero and the smallest fp16 subnormal pass through.
  const std::vector<double> x = {-2.0, 0.0, 3.5, -0.25, 1.0, 5.960464477539063e-08};
  expect_all_near(run(task, rows(2, 3), x, 6), {0.0, 0.0, 3.5, 0.0, 1.0, 5.960464477539063e-08});
}

TEST(Core10Reference, GeluErfFormAtHandPoints) {
  const task_spec task = load_task(BLASTER_SOURCE_DIR "/tasks/gelu");
  // gelu(x) = 0.5 * x * (1 + erf(x / sqrt2)) = x * Phi(x):
  //   gelu(0)  = 0
  //   gelu(1)  = 0.5 * (1 + erf(0.7071067811865476)) = 0.5 * 1.6826894921370859
  //            = 0.8413447460685429
  //   gelu(-1) = -0.5 * (1 - 0.6826894921370859) = -0.15865525393145707
  //   gelu(2)  = 0.5 * 2 * (1 + erf(1.4142135623730951)) = 1 + 0.9544997361036416
  //            = 1.9544997361036416
  //   gelu(-3) = -3 * Phi(-3) = -3 * 0.0013498980316300946 = -0.00404969409489031
  //   gelu(0.5) = 0.25 * (1 + erf(0.3535533905932738)) = 0.25 * 1.3829249225480262
  //             = 0.34573123063700656
  const std::vector<double> x = {0.0, 1.0, -1.0, 2.0, -3.0, 0.5};
  expect_all_near(run(task, rows(3, 2), x, 6),
                  {0.0, 0.8413447460685429, -0.15865525393145707, 1.9544997361036416,
                   -0.00404969409489031, 0.34573123063700656});
}

TEST(Core10Reference, NewGeluTanhFormAtHandPoints) {
  const task_spec task = load_task(BLASTER_SOURCE_DIR "/tasks/newgelu");
  // newgelu(x) = 0.5 * x * (1 + tanh(c * (x + 0.044715 * x^3))), c = sqrt(2/pi) = 0.7978845608:
  //   x = 1:  inner = c * 1.044715 = 0.8335619689391656, tanh = 0.6823839812165535,
  //           out = 0.5 * 1.6823839812165535 = 0.8411919906082768
  //   x = -1: odd inner, so tanh = -0.6823839812165535 and out = -0.5 * 0.3176160187834465
  //           = -0.15880800939172324
  //   x = 2:  inner = c * (2 + 0.35772) = 1.8811883866961319, tanh = 0.9545976940877751,
  //           out = 1.9545976940877751 = 1.954597694087775
  //   x = -3: inner = c * (-3 - 1.207305) = -3.3569437020886994, tanh = -0.9975750719454847,
  //           out = -1.5 * 0.0024249280545153 = -0.0036373920817729943
  //   x = 0:  0
  // The tanh form differs from the erf form (gelu(1) = 0.8413447460685429) in the fourth digit,
  // so a kernel that uses the wrong one fails at these points.
  const std::vector<double> x = {1.0, -1.0, 2.0, -3.0, 0.0};
  expect_all_near(run(task, rows(1, 5), x, 5), {0.8411919906082768, -0.15880800939172324,
                                                1.954597694087775, -0.0036373920817729943, 0.0});
}

TEST(Core10Reference, ElementwiseTasksCoverEveryElementOfALargeCase) {
  // The references split the elements across threads; each element must still be computed.
  const task_case c = rows(37, 1031);
  std::vector<double> x(37 * 1031);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<double>(i)) * 4.0;
  const double k = std::sqrt(2.0 / 3.141592653589793);
  const auto relu = run(load_task(BLASTER_SOURCE_DIR "/tasks/relu"), c, x, x.size());
  const auto gelu = run(load_task(BLASTER_SOURCE_DIR "/tasks/gelu"), c, x, x.size());
  const auto newgelu = run(load_task(BLASTER_SOURCE_DIR "/tasks/newgelu"), c, x, x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    ASSERT_NEAR(relu[i], std::fmax(v, 0.0), 1e-12) << i;
    ASSERT_NEAR(gelu[i], 0.5 * v * std::erfc(-v / std::sqrt(2.0)), 1e-12) << i;
    ASSERT_NEAR(newgelu[i], 0.5 * v * (1.0 + std::tanh(k * (v + 0.044715 * v * v * v))), 1e-12)
        << i;
  }
}

class SumDim1Reference : public ::testing::Test {
 protected:
  void SetUp() override { task_ = load_task(BLASTER_SOURCE_DIR "/tasks/sum_dim1"); }

  static task_case make_case(double b, double d1, double d2) {
    return task_case{.name = "hand", .note = "", .values = {{"B", b}, {"D1", d1}, {"D2", d2}}};
  }

  task_spec task_;
};

TEST_F(SumDim1Reference, SumsDownDimOneOfA2x3x2Tensor) {
  // x[b][i][j] = 1..12 in row-major order:
  //   b=0: [[1, 2], [3, 4], [5, 6]]     -> j=0: 1+3+5 = 9,   j=1: 2+4+6 = 12
  //   b=1: [[7, 8], [9, 10], [11, 12]]  -> j=0: 7+9+11 = 27, j=1: 8+10+12 = 30
  // out is [2, 1, 2], so four values in the order (b0 j0, b0 j1, b1 j0, b1 j1).
  std::vector<double> x(12);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i + 1);
  expect_all_near(run(task_, make_case(2, 3, 2), x, 4), {9.0, 12.0, 27.0, 30.0});
}

TEST_F(SumDim1Reference, SignsCancelAndOneRowIsACopy) {
  // B=1, D1=3, D2=3: columns (0.5, -1.5, 1) = 0, (2, 0.25, -4) = -1.75, (-3, 3, 1e-3) = 1e-3.
  const std::vector<double> x = {0.5, 2.0, -3.0, -1.5, 0.25, 3.0, 1.0, -4.0, 1e-3};
  expect_all_near(run(task_, make_case(1, 3, 3), x, 3), {0.0, -1.75, 1e-3});
  // D1=1: nothing to add, out equals x.
  expect_all_near(run(task_, make_case(2, 1, 2), {1.5, -2.0, 0.0, 7.0}, 4), {1.5, -2.0, 0.0, 7.0});
}

TEST_F(SumDim1Reference, LargeCaseMatchesASerialLoop) {
  // The reference splits outputs across threads; every (b, j) must still be summed.
  const std::size_t b = 3, d1 = 29, d2 = 211;
  std::vector<double> x(b * d1 * d2);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::cos(static_cast<double>(i)) * 2.0;
  const auto out = run(task_, make_case(3, 29, 211), x, b * d2);
  for (std::size_t bb = 0; bb < b; ++bb) {
    for (std::size_t j = 0; j < d2; ++j) {
      double sum = 0.0;
      for (std::size_t i = 0; i < d1; ++i) sum += x[(bb * d1 + i) * d2 + j];
      ASSERT_NEAR(out[bb * d2 + j], sum, 1e-12) << bb << ", " << j;
    }
  }
}

}  // namespace
}  // namespace blaster
