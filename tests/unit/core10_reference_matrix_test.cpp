#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tasks/reference.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {
namespace {

// The matrix references of the core10 suite (matvec, matmul_smallk), checked against values
// worked out by hand on the real task.json files.

class MatrixReference : public ::testing::Test {
 protected:
  // Runs the task's registered reference on A and B; out has `outputs` elements.
  static std::vector<double> run(const task_spec& task, const task_case& c,
                                 const std::vector<double>& a, const std::vector<double>& b,
                                 std::size_t outputs) {
    std::vector<double> out(outputs, -12345.0);  // a value the reference must overwrite
    const reference_context io{
        .task = task,
        .which = c,
        .inputs = {{"A", std::span<const double>(a)}, {"B", std::span<const double>(b)}},
        .outputs = {{"out", std::span<double>(out)}}};
    find_reference(task.reference)(io);
    return out;
  }

  static task_case sizes(std::map<std::string, double, std::less<>> values) {
    return task_case{.name = "hand", .note = "", .values = std::move(values)};
  }

  static void expect_all_near(const std::vector<double>& got, const std::vector<double>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << i;
  }
};

class MatvecReference : public MatrixReference {
 protected:
  void SetUp() override { task_ = load_task(BLASTER_SOURCE_DIR "/tasks/matvec"); }
  std::vector<double> run(double m, double k, const std::vector<double>& a,
                          const std::vector<double>& b) const {
    return MatrixReference::run(task_, sizes({{"M", m}, {"K", k}}), a, b,
                                static_cast<std::size_t>(m));
  }
  task_spec task_;
};

class MatmulSmallKReference : public MatrixReference {
 protected:
  void SetUp() override { task_ = load_task(BLASTER_SOURCE_DIR "/tasks/matmul_smallk"); }
  std::vector<double> run(double m, double n, double k, const std::vector<double>& a,
                          const std::vector<double>& b) const {
    return MatrixReference::run(task_, sizes({{"M", m}, {"N", n}, {"K", k}}), a, b,
                                static_cast<std::size_t>(m * n));
  }
  task_spec task_;
};

TEST(Core10MatrixReference, EveryTaskNamesItsRegisteredReference) {
  for (const char* name : {"matvec", "matmul_smallk"}) {
    const task_spec task = load_task(std::string(BLASTER_SOURCE_DIR "/tasks/") + name);
    EXPECT_EQ(task.reference, name);
    EXPECT_NE(find_reference(task.reference), nullptr) << name;
  }
}

TEST_F(MatvecReference, DotsEachRowOfA2x3WithB) {
  // A = [[1, 2, 3], [4, 5, 6]], B = [1, 0.5, -2]:
  //   row 0: 1*1 + 2*0.5 + 3*(-2) = 1 + 1 - 6    = -4
  //   row 1: 4*1 + 5*0.5 + 6*(-2) = 4 + 2.5 - 12 = -5.5
  expect_all_near(run(2, 3, {1, 2, 3, 4, 5, 6}, {1, 0.5, -2}), {-4.0, -5.5});
}

TEST_F(MatvecReference, OneColumnScalesAndOneElementMultiplies) {
  // K = 1: out = A * B[0]: [2, -1, 0.5] * 4 = [8, -4, 2].
  expect_all_near(run(3, 1, {2, -1, 0.5}, {4}), {8.0, -4.0, 2.0});
  // M = K = 1: 3 * -0.25 = -0.75.
  expect_all_near(run(1, 1, {3}, {-0.25}), {-0.75});
}

TEST_F(MatvecReference, KeepsTermsAFloatAccumulatorLoses) {
  // 2^24 + 1 - 2^24 = 1 in float64; a float32 running sum rounds 2^24 + 1 to 2^24 and gives 0.
  const double big = 16777216.0;
  expect_all_near(run(1, 3, {big, 1, -big}, {1, 1, 1}), {1.0});
}

TEST_F(MatvecReference, LargeCaseMatchesASerialLoop) {
  // The reference splits rows across threads; every row must still see all of K.
  const std::size_t m = 37, k = 1031;
  std::vector<double> a(m * k);
  std::vector<double> b(k);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = std::sin(static_cast<double>(i)) * 2.0;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::cos(static_cast<double>(i) * 0.5);
  const auto out = run(37, 1031, a, b);
  for (std::size_t row = 0; row < m; ++row) {
    double sum = 0.0;
    for (std::size_t j = 0; j < k; ++j) sum += a[row * k + j] * b[j];
    ASSERT_NEAR(out[row], sum, 1e-9) << row;
  }
}

TEST_F(MatmulSmallKReference, Multiplies2x3By3x2) {
  // A = [[1, 2, 3], [4, 5, 6]], B = [[7, 8], [9, 10], [11, 12]]:
  //   out[0][0] = 1*7 + 2*9 + 3*11  = 7 + 18 + 33  = 58
  //   out[0][1] = 1*8 + 2*10 + 3*12 = 8 + 20 + 36  = 64
  //   out[1][0] = 4*7 + 5*9 + 6*11  = 28 + 45 + 66 = 139
  //   out[1][1] = 4*8 + 5*10 + 6*12 = 32 + 50 + 72 = 154
  expect_all_near(run(2, 2, 3, {1, 2, 3, 4, 5, 6}, {7, 8, 9, 10, 11, 12}),
                  {58.0, 64.0, 139.0, 154.0});
}

TEST_F(MatmulSmallKReference, KOfOneIsAnOuterProduct) {
  // A = [1, -2] (2x1), B = [3, 0.5, -1] (1x3): out[m][n] = A[m] * B[n].
  expect_all_near(run(2, 3, 1, {1, -2}, {3, 0.5, -1}), {3.0, 0.5, -1.0, -6.0, -1.0, 2.0});
}

TEST_F(MatmulSmallKReference, OneRowIsAVectorTimesMatrix) {
  // A = [0.5, -1] (1x2), B = [[2, 4, -6], [1, 0, 3]]: out = [1 - 1, 2 - 0, -3 - 3] = [0, 2, -6].
  expect_all_near(run(1, 3, 2, {0.5, -1}, {2, 4, -6, 1, 0, 3}), {0.0, 2.0, -6.0});
}

TEST_F(MatmulSmallKReference, LargeCaseMatchesASerialLoop) {
  // Wider than the reference's column strip, with a ragged last strip and rows split across
  // threads: every element must still be computed over all of K.
  const std::size_t m = 19, n = 1031, k = 7;
  std::vector<double> a(m * k);
  std::vector<double> b(k * n);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = std::sin(static_cast<double>(i) * 0.7);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::cos(static_cast<double>(i)) * 3.0;
  const auto out = run(19, 1031, 7, a, b);
  for (std::size_t row = 0; row < m; ++row) {
    for (std::size_t col = 0; col < n; ++col) {
      double sum = 0.0;
      for (std::size_t j = 0; j < k; ++j) sum += a[row * k + j] * b[j * n + col];
      ASSERT_NEAR(out[row * n + col], sum, 1e-12) << row << ", " << col;
    }
  }
}

}  // namespace
}  // namespace blaster
