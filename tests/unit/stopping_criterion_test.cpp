#include "benchmarking/timing/detail/stopping_criterion.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <ostream>
#include <vector>

#include "benchmarking/statistics/statistics.hpp"
#include "core/error.hpp"

namespace blaster {

// Failures then print the reason's name, not its bytes.
void PrintTo(stop_reason reason, std::ostream* os) { *os << to_string(reason); }

namespace {

// The samples a stopping criterion had taken when it first said done, fed through the base
// class as a timer would; -1 if it never did. Each sample is charged `sample_s` of time.
int samples_until_done(stopping_criterion& criterion, const std::vector<double>& samples,
                       double sample_s) {
  int taken = 0;
  for (const double sample : samples) {
    if (criterion.done()) break;
    criterion.add(sample);
    criterion.add_elapsed(sample_s);
    ++taken;
  }
  return criterion.done() ? taken : -1;
}

// A power of two, so that the elapsed time sums exactly to the budget.
constexpr double tick_s = 1.0 / 1024.0;

std::vector<double> alternating(int count) {
  std::vector<double> samples;
  for (int i = 0; i < count; ++i) samples.push_back(i % 2 == 0 ? 1.0 : 1.1);
  return samples;
}

TEST(StoppingCriterion, ConstantSamplesConvergeAtExactlyMinSamples) {
  relative_noise_criterion criterion;
  EXPECT_FALSE(criterion.done());
  EXPECT_EQ(criterion.reason(), stop_reason::not_done);
  for (int i = 0; i < 9; ++i) criterion.add(2.5);
  EXPECT_FALSE(criterion.done()) << "9 quiet samples are still fewer than min_samples 10";
  criterion.add(2.5);
  EXPECT_TRUE(criterion.done());
  EXPECT_EQ(criterion.reason(), stop_reason::converged);
  EXPECT_EQ(criterion.samples(), 10);
  EXPECT_EQ(criterion.noise(), 0.0);
  EXPECT_NE(criterion.describe().find("converged"), std::string::npos) << criterion.describe();
}

TEST(StoppingCriterion, NoisySamplesNeverConvergeAndStopOnBudget) {
  relative_noise_criterion criterion({.budget_s = 0.5});
  const std::vector<double> samples = alternating(2000);
  EXPECT_EQ(samples_until_done(criterion, samples, tick_s), 512);  // 512 ticks are 0.5 s
  EXPECT_EQ(criterion.reason(), stop_reason::budget);
  EXPECT_EQ(criterion.elapsed_s(), 0.5);
  // The running noise agrees with the two-pass definition: about 4.8%, far above 0.5%.
  const std::vector<double> taken(samples.begin(), samples.begin() + 512);
  EXPECT_NEAR(criterion.noise(), relative_noise(taken), 1e-12);
  EXPECT_GT(criterion.noise(), 0.047);
  EXPECT_NE(criterion.describe().find("budget"), std::string::npos) << criterion.describe();
}

TEST(StoppingCriterion, StopsWhenTheNoiseFallsBelowTheBoundAndNotBefore) {
  // Two outliers then a steady 1.1: the mean stays 1.1 and the sum of squared deviations 0.02,
  // so the noise is sqrt(0.02 / (n - 1)) / 1.1, which first reaches 0.5% at n = 663.
  std::vector<double> samples = {1.0, 1.2};
  samples.resize(5000, 1.1);
  relative_noise_criterion criterion({.budget_s = 3600.0});
  EXPECT_EQ(samples_until_done(criterion, samples, tick_s), 663);
  EXPECT_EQ(criterion.reason(), stop_reason::converged);
  EXPECT_LE(criterion.noise(), 0.005);
  const std::vector<double> one_fewer(samples.begin(), samples.begin() + 662);
  EXPECT_GT(relative_noise(one_fewer), 0.005);
}

TEST(StoppingCriterion, StopsAtMaxSamples) {
  relative_noise_criterion criterion({.max_samples = 50});
  EXPECT_EQ(samples_until_done(criterion, alternating(1000), 0.0), 50);
  EXPECT_EQ(criterion.reason(), stop_reason::max_samples);
  EXPECT_NE(criterion.describe().find("max_samples"), std::string::npos) << criterion.describe();
}

TEST(StoppingCriterion, BudgetStopsEvenBeforeMinSamples) {
  relative_noise_criterion criterion({.budget_s = 1.0});
  criterion.add(1.0);
  EXPECT_FALSE(criterion.done());
  criterion.add_elapsed(1.5);
  EXPECT_TRUE(criterion.done());
  EXPECT_EQ(criterion.reason(), stop_reason::budget);
  EXPECT_EQ(criterion.samples(), 1);
}

TEST(StoppingCriterion, ConvergedIsReportedOverTheBudget) {
  relative_noise_criterion criterion({.budget_s = 1.0});
  for (int i = 0; i < 10; ++i) criterion.add(1.0);
  criterion.add_elapsed(2.0);
  EXPECT_EQ(criterion.reason(), stop_reason::converged);
}

TEST(StoppingCriterion, NotDoneDescribesHowFarItIs) {
  relative_noise_criterion criterion;
  criterion.add(1.0);
  criterion.add(1.1);
  EXPECT_FALSE(criterion.done());
  const std::string text = criterion.describe();
  EXPECT_NE(text.find("not done"), std::string::npos) << text;
  EXPECT_NE(text.find("2 samples"), std::string::npos) << text;
}

TEST(StoppingCriterion, RejectsMalformedRulesAndSamples) {
  EXPECT_THROW(relative_noise_criterion({.min_samples = 1}), input_error);
  EXPECT_THROW(relative_noise_criterion({.min_samples = 20, .max_samples = 19}), input_error);
  EXPECT_THROW(relative_noise_criterion({.max_noise = -0.1}), input_error);
  EXPECT_THROW(relative_noise_criterion({.budget_s = 0.0}), input_error);

  relative_noise_criterion criterion;
  EXPECT_THROW(criterion.add(std::numeric_limits<double>::quiet_NaN()), error);
  EXPECT_THROW(criterion.add(-1.0), error);
  EXPECT_THROW(criterion.add_elapsed(-0.5), error);
  EXPECT_EQ(criterion.samples(), 0) << "a rejected sample must not be counted";
}

TEST(StoppingCriterion, ReasonNames) {
  EXPECT_EQ(to_string(stop_reason::converged), "converged");
  EXPECT_EQ(to_string(stop_reason::budget), "budget");
  EXPECT_EQ(to_string(stop_reason::max_samples), "max_samples");
  EXPECT_EQ(to_string(stop_reason::not_done), "not_done");
}

}  // namespace
}  // namespace blaster
