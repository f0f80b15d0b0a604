#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "tasks/input_generator.hpp"
#include "tasks/reference.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {
namespace {

// The references of the core10 suite's normalizations and losses (softmax, layernorm,
// cross_entropy), checked against values worked out by hand on the real task.json files.

using buffers = std::map<std::string, std::vector<double>, std::less<>>;

// Runs the task's registered reference; every output starts at a value it must overwrite.
buffers run(const task_spec& task, const task_case& c, const buffers& inputs,
            const std::map<std::string, std::size_t>& outputs) {
  buffers out;
  for (const auto& [name, size] : outputs) out[name].assign(size, -12345.0);
  reference_context io{.task = task, .which = c, .inputs = {}, .outputs = {}};
  for (const auto& [name, values] : inputs) io.inputs[name] = std::span<const double>(values);
  for (auto& [name, values] : out) io.outputs[name] = std::span<double>(values);
  find_reference(task.reference)(io);
  return out;
}

task_case sizes(std::map<std::string, double, std::less<>> values) {
  return task_case{.name = "hand", .note = "", .values = std::move(values)};
}

void expect_all_near(const std::vector<double>& got, const std::vector<double>& want,
                     double tolerance = 1e-12) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], tolerance) << i;
}

TEST(Core10NormsReference, EveryTaskNamesItsRegisteredReference) {
  for (const char* name : {"softmax", "layernorm", "cross_entropy"}) {
    const task_spec task = load_task(std::string(BLASTER_SOURCE_DIR "/tasks/") + name);
    EXPECT_EQ(task.reference, name);
    EXPECT_NE(find_reference(task.reference), nullptr) << name;
  }
}

class SoftmaxReference : public ::testing::Test {
 protected:
  void SetUp() override { task_ = load_task(BLASTER_SOURCE_DIR "/tasks/softmax"); }

  std::vector<double> softmax(double b, double d, const std::vector<double>& x) const {
    return run(task_, sizes({{"B", b}, {"D", d}}), {{"x", x}}, {{"out", x.size()}}).at("out");
  }

  task_spec task_;
};

TEST_F(SoftmaxReference, TwoByHandRows) {
  // Row 0: exp(0) = 1 and exp(ln 3) = 3 share 4: [0.25, 0.75]. Row 1: equal values split evenly.
  expect_all_near(softmax(2, 2, {0.0, std::log(3.0), 5.0, 5.0}), {0.25, 0.75, 0.5, 0.5});
}

TEST_F(SoftmaxReference, LogsOfOneToFourGiveTenths) {
  // exp(ln k) = k, and 1 + 2 + 3 + 4 = 10.
  const std::vector<double> x = {0.0, std::log(2.0), std::log(3.0), std::log(4.0)};
  expect_all_near(softmax(1, 4, x), {0.1, 0.2, 0.3, 0.4});
}

TEST_F(SoftmaxReference, LargeMagnitudesNeedTheMaxSubtracted) {
  // exp(1000) overflows even a double, exp(-1000) underflows to 0: shifted by the row max both
  // rows are [0, ln 3] again.
  const std::vector<double> x = {1000.0, 1000.0 + std::log(3.0), -1000.0, -1000.0 + std::log(3.0)};
  expect_all_near(softmax(2, 2, x), {0.25, 0.75, 0.25, 0.75});
}

TEST_F(SoftmaxReference, OneElementRowsAreOne) {
  expect_all_near(softmax(3, 1, {-7.0, 0.0, 60000.0}), {1.0, 1.0, 1.0});
}

TEST_F(SoftmaxReference, LargeCaseMatchesASerialLoop) {
  // Rows are split across threads; each must still be normalized on its own.
  const std::size_t b = 37, d = 1031;
  std::vector<double> x(b * d);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<double>(i)) * 6.0;
  const auto out = softmax(37, 1031, x);
  for (std::size_t r = 0; r < b; ++r) {
    double m = x[r * d];
    for (std::size_t j = 0; j < d; ++j) m = std::fmax(m, x[r * d + j]);
    double sum = 0.0;
    for (std::size_t j = 0; j < d; ++j) sum += std::exp(x[r * d + j] - m);
    double total = 0.0;
    for (std::size_t j = 0; j < d; ++j) {
      ASSERT_NEAR(out[r * d + j], std::exp(x[r * d + j] - m) / sum, 1e-15) << r << ", " << j;
      total += out[r * d + j];
    }
    EXPECT_NEAR(total, 1.0, 1e-12) << r;
  }
}

class LayernormReference : public ::testing::Test {
 protected:
  void SetUp() override { task_ = load_task(BLASTER_SOURCE_DIR "/tasks/layernorm"); }

  // x is [B, C, H, W]; weight and bias are [C, H, W], shared by every row.
  std::vector<double> layernorm(double b, double c, double h, double w,
                                const std::vector<double>& x, const std::vector<double>& weight,
                                const std::vector<double>& bias) const {
    return run(task_, sizes({{"B", b}, {"C", c}, {"H", h}, {"W", w}}),
               {{"x", x}, {"weight", weight}, {"bias", bias}}, {{"out", x.size()}})
        .at("out");
  }

  task_spec task_;
};

// 1 / sqrt(1 + eps) with the task's eps = 1e-5.
constexpr double unit_scale = 0.9999950000374997;

TEST_F(LayernormReference, TwoElementsAroundTheirMean) {
  // x = [1, 3]: mean 2, biased variance ((-1)^2 + 1^2) / 2 = 1, so y = [-1, 1] / sqrt(1 + eps).
  // weight [2, 0.5], bias [1, -1]: out = [1 - 2 * 0.99999500003750, -1 + 0.5 * 0.99999500003750]
  //                                    = [-0.9999900000749995, -0.5000024999812501].
  expect_all_near(layernorm(1, 1, 1, 2, {1.0, 3.0}, {2.0, 0.5}, {1.0, -1.0}),
                  {-0.9999900000749995, -0.5000024999812501});
}

TEST_F(LayernormReference, FourElementsUnitAffine) {
  // x = [1, 2, 3, 4]: mean 2.5, variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25, so
  // y = (x - 2.5) / sqrt(1.25001) = [-1.3416354199689269, -0.447211806656309, ...].
  expect_all_near(layernorm(1, 1, 2, 2, {1.0, 2.0, 3.0, 4.0}, {1, 1, 1, 1}, {0, 0, 0, 0}),
                  {-1.3416354199689269, -0.447211806656309, 0.447211806656309, 1.3416354199689269});
}

TEST_F(LayernormReference, EachBatchHasItsOwnStatisticsButSharesWeightAndBias) {
  // B=2 rows of C*H*W = 2: [1, 3] and [1000, 1002] both normalize to [-1, 1] / sqrt(1 + eps)
  // (the second's mean is far from zero, its variance still 1); weight and bias apply by
  // position within the row, the same for both rows.
  const std::vector<double> want = {1.0 - 2.0 * unit_scale, -1.0 + 0.5 * unit_scale};
  expect_all_near(layernorm(2, 2, 1, 1, {1.0, 3.0, 1000.0, 1002.0}, {2.0, 0.5}, {1.0, -1.0}),
                  {want[0], want[1], want[0], want[1]}, 1e-9);
}

TEST_F(LayernormReference, OneElementRowsAreTheBias) {
  // The variance of one element is 0: (x - x) / sqrt(eps) = 0, so out = bias.
  expect_all_near(layernorm(3, 1, 1, 1, {7.0, -2.0, 500.0}, {3.0}, {0.25}), {0.25, 0.25, 0.25});
}

TEST_F(LayernormReference, LargeCaseMatchesASerialLoop) {
  const std::size_t rows = 5, length = 3 * 7 * 11;
  std::vector<double> x(rows * length), weight(length), bias(length);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 40.0 + std::cos(static_cast<double>(i)) * 3.0;
  for (std::size_t i = 0; i < length; ++i) {
    weight[i] = 1.0 + 0.01 * static_cast<double>(i % 13);
    bias[i] = std::sin(static_cast<double>(i));
  }
  const auto out = layernorm(5, 3, 7, 11, x, weight, bias);
  for (std::size_t r = 0; r < rows; ++r) {
    double mean = 0.0;
    for (std::size_t i = 0; i < length; ++i) mean += x[r * length + i];
    mean /= static_cast<double>(length);
    double var = 0.0;
    for (std::size_t i = 0; i < length; ++i) {
      var += (x[r * length + i] - mean) * (x[r * length + i] - mean);
    }
    var /= static_cast<double>(length);
    for (std::size_t i = 0; i < length; ++i) {
      const double want = (x[r * length + i] - mean) / std::sqrt(var + 1e-5) * weight[i] + bias[i];
      ASSERT_NEAR(out[r * length + i], want, 1e-12) << r << ", " << i;
    }
  }
}

class CrossEntropyReference : public ::testing::Test {
 protected:
  void SetUp() override { task_ = load_task(BLASTER_SOURCE_DIR "/tasks/cross_entropy"); }

  double loss(double n, double c, const std::vector<double>& logits,
              const std::vector<double>& targets) const {
    const auto out = run(task_, sizes({{"N", n}, {"C", c}}),
                         {{"logits", logits}, {"targets", targets}}, {{"loss", 1}});
    return out.at("loss").at(0);
  }

  task_spec task_;
};

TEST_F(CrossEntropyReference, OneRowByHand) {
  // logits [0, ln 3]: softmax [0.25, 0.75]. Target 1: -ln 0.75 = 0.2876820724517809; target 0:
  // -ln 0.25 = ln 4 = 1.3862943611198906.
  EXPECT_NEAR(loss(1, 2, {0.0, std::log(3.0)}, {1}), 0.2876820724517809, 1e-15);
  EXPECT_NEAR(loss(1, 2, {0.0, std::log(3.0)}, {0}), 1.3862943611198906, 1e-15);
}

TEST_F(CrossEntropyReference, TheMeanOverRows) {
  // The two rows above in one batch: (0.2876820724517809 + 1.3862943611198906) / 2.
  EXPECT_NEAR(loss(2, 2, {0.0, std::log(3.0), 0.0, std::log(3.0)}, {1, 0}), 0.8369882167858358,
              1e-15);
}

TEST_F(CrossEntropyReference, EqualLogitsGiveLogC) {
  // Every class equally likely: -ln(1/4) = ln 4, whatever the target and the common value.
  EXPECT_NEAR(loss(2, 4, {3, 3, 3, 3, -9, -9, -9, -9}, {0, 3}), 1.3862943611198906, 1e-15);
}

TEST_F(CrossEntropyReference, LargeLogitsNeedTheMaxSubtracted) {
  // exp(20000) is infinite even in double; shifted by the row max the row is [0, ln 3] again.
  EXPECT_NEAR(loss(1, 2, {20000.0, 20000.0 + std::log(3.0)}, {1}), 0.2876820724517809, 1e-9);
}

TEST_F(CrossEntropyReference, OneClassLosesNothing) {
  // log_softmax of a single logit is 0, however large the logit.
  EXPECT_EQ(loss(3, 1, {60000.0, -5.0, 0.0}, {0, 0, 0}), 0.0);
}

TEST_F(CrossEntropyReference, TargetOutsideTheClassesIsTheTasksError) {
  EXPECT_THROW(static_cast<void>(loss(1, 2, {0.0, 1.0}, {2})), input_error);
  EXPECT_THROW(static_cast<void>(loss(1, 2, {0.0, 1.0}, {-1})), input_error);
}

TEST_F(CrossEntropyReference, ManyRowsMatchASerialLoop) {
  const std::size_t n = 301, c = 17;
  std::vector<double> logits(n * c), targets(n);
  for (std::size_t i = 0; i < logits.size(); ++i)
    logits[i] = std::sin(0.7 * static_cast<double>(i)) * 9.0;
  for (std::size_t i = 0; i < n; ++i) targets[i] = static_cast<double>((i * 5) % c);
  double total = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    double m = logits[i * c];
    for (std::size_t j = 0; j < c; ++j) m = std::fmax(m, logits[i * c + j]);
    double sum = 0.0;
    for (std::size_t j = 0; j < c; ++j) sum += std::exp(logits[i * c + j] - m);
    total += m + std::log(sum) - logits[i * c + static_cast<std::size_t>(targets[i])];
  }
  EXPECT_NEAR(loss(301, 17, logits, targets), total / 301.0, 1e-12);
}

TEST_F(CrossEntropyReference, CauchyLogitsStayFiniteInF16) {
  // The canonical logits are Student's t with one degree of freedom: about 1 draw in 10^5 lies
  // past f16's 65504. Drawn anyway, it would be an infinite logit and a NaN loss; the generator
  // draws again, so every logit is finite and the tail still reaches far.
  const buffer_spec& logits = *task_.find_buffer("logits");
  const distribution d = task_.input_distribution(logits, task_.canonical());
  const host_tensor t = generate_input(logits.type, d, 1 << 20, 5);
  double widest = 0.0;
  for (double v : t.values) {
    ASSERT_TRUE(std::isfinite(v));
    widest = std::fmax(widest, std::fabs(v));
  }
  EXPECT_GT(widest, 1000.0);
}

}  // namespace
}  // namespace blaster
