#include "benchmarking/statistics/statistics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace blaster {
namespace {

TEST(Statistics, MedianOfOddEvenAndEmpty) {
  const std::vector<double> odd = {3.0, 1.0, 2.0};
  const std::vector<double> even = {4.0, 1.0, 3.0, 2.0};
  EXPECT_EQ(median(odd), 2.0);
  EXPECT_EQ(median(even), 2.5);
  EXPECT_EQ(median({}), 0.0);
  EXPECT_EQ(odd, (std::vector<double>{3.0, 1.0, 2.0})) << "median must not reorder its input";
}

TEST(Statistics, MeanStddevAndRelativeNoise) {
  // The textbook set: mean 5, squared deviations summing to 32.
  const std::vector<double> values = {2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0};
  EXPECT_DOUBLE_EQ(mean(values), 5.0);
  EXPECT_DOUBLE_EQ(stddev(values), std::sqrt(32.0 / 7.0));  // n - 1, not n
  EXPECT_DOUBLE_EQ(relative_noise(values), std::sqrt(32.0 / 7.0) / 5.0);

  const std::vector<double> pair = {1.0, 1.1};
  EXPECT_NEAR(relative_noise(pair), std::sqrt(0.005) / 1.05, 1e-12);
}

TEST(Statistics, FewerThanTwoValuesHaveNoNoise) {
  const std::vector<double> one = {42.0};
  EXPECT_EQ(mean(one), 42.0);
  EXPECT_EQ(stddev(one), 0.0);
  EXPECT_EQ(relative_noise(one), 0.0);
  EXPECT_EQ(mean({}), 0.0);
  EXPECT_EQ(stddev({}), 0.0);
  EXPECT_EQ(relative_noise({}), 0.0);
}

TEST(Statistics, RelativeNoiseOfZeroMean) {
  const std::vector<double> zeros = {0.0, 0.0, 0.0};
  const std::vector<double> balanced = {-1.0, 1.0};
  EXPECT_EQ(relative_noise(zeros), 0.0);
  EXPECT_TRUE(std::isinf(relative_noise(balanced)));
}

TEST(Statistics, MinMaxAndSpread) {
  const std::vector<double> values = {1.25, 1.0, 1.5};
  EXPECT_EQ(min(values), 1.0);
  EXPECT_EQ(max(values), 1.5);
  EXPECT_EQ(spread(values), 0.5);
  const std::vector<double> sessions = {20.0, 21.0, 20.5};
  EXPECT_NEAR(spread(sessions), 0.05, 1e-15);
  const std::vector<double> same = {3.0, 3.0};
  EXPECT_EQ(spread(same), 0.0);
  EXPECT_EQ(spread({}), 0.0);
}

TEST(Statistics, GeometricMeanOfRatios) {
  // A 2x gain and a 2x loss cancel; the arithmetic mean (1.25) would call that a gain.
  const std::vector<double> ratios = {2.0, 0.5};
  EXPECT_NEAR(geometric_mean(ratios), 1.0, 1e-15);
  const std::vector<double> three = {1.0, 8.0, 27.0};
  EXPECT_NEAR(geometric_mean(three), 6.0, 1e-12);
  EXPECT_TRUE(std::isnan(geometric_mean({})));
}

TEST(Statistics, SpreadNeedsPositiveValues) {
  const std::vector<double> with_zero = {0.0, 1.0};
  const std::vector<double> negative = {-1.0, 1.0};
  EXPECT_THROW(spread(with_zero), input_error);
  EXPECT_THROW(spread(negative), input_error);
}

TEST(Statistics, QuantileInterpolatesLinearly) {
  const std::vector<double> values = {4.0, 1.0, 3.0, 2.0};  // unsorted on purpose
  EXPECT_EQ(quantile(values, 0.0), 1.0);
  EXPECT_EQ(quantile(values, 1.0), 4.0);
  EXPECT_DOUBLE_EQ(quantile(values, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile(values, 0.25), 1.75);  // h = 0.75: 1 + 0.75 * (2 - 1)
  EXPECT_DOUBLE_EQ(quantile(values, 0.9), 3.7);    // h = 2.7: 3 + 0.7 * (4 - 3)
  const std::vector<double> odd = {5.0, 1.0, 3.0, 9.0, 7.0};
  EXPECT_EQ(quantile(odd, 0.5), median(odd));
  const std::vector<double> one = {7.0};
  EXPECT_EQ(quantile(one, 0.3), 7.0);
}

TEST(Statistics, QuantileRejectsProbabilitiesOutsideTheUnitInterval) {
  const std::vector<double> values = {1.0, 2.0};
  EXPECT_THROW(quantile(values, -0.01), input_error);
  EXPECT_THROW(quantile(values, 1.01), input_error);
  EXPECT_THROW(quantile(values, std::numeric_limits<double>::quiet_NaN()), input_error);
}

TEST(Statistics, StandardStatisticsAreRegisteredByNameInOrder) {
  const std::vector<double> values = {2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0};
  const std::vector<std::string_view> names = {"median",         "mean", "stddev",
                                               "relative_noise", "min",  "max"};
  const std::vector<double> expected = {
      4.5, 5.0, std::sqrt(32.0 / 7.0), std::sqrt(32.0 / 7.0) / 5.0, 2.0, 9.0};
  const auto registry = standard_statistics();
  ASSERT_EQ(registry.size(), names.size());
  for (std::size_t i = 0; i < registry.size(); ++i) {
    EXPECT_EQ(registry[i].name, names[i]);
    EXPECT_DOUBLE_EQ(registry[i].compute(values), expected[i]) << names[i];
  }
}

TEST(Statistics, CalibratedInnerCount) {
  EXPECT_EQ(calibrated_inner_count(0.07, 1.0), 15);  // 14.29 rounds up
  EXPECT_EQ(calibrated_inner_count(0.25, 1.0), 4);   // exact quotients are not rounded up
  EXPECT_EQ(calibrated_inner_count(5.0, 1.0), 1);
  EXPECT_EQ(calibrated_inner_count(1e-9, 1.0), 100000);
  EXPECT_EQ(calibrated_inner_count(1e-9, 1.0, 64), 64);
  EXPECT_EQ(calibrated_inner_count(0.0, 1.0), 100000);
  EXPECT_EQ(calibrated_inner_count(-3.0, 1.0), 100000);
  EXPECT_EQ(calibrated_inner_count(0.07, 0.0), 1);
  EXPECT_THROW(calibrated_inner_count(0.07, 1.0, 0), input_error);
}

TEST(Bootstrap, KnownIntervalOfTwoSessions) {
  // Resamples draw (0,0) a quarter of the time (ratio 1/1), (1,1) a quarter (1/0.5) and a mixed
  // pair half the time (1/0.75), so the 2.5% and 97.5% quantiles are exactly 1 and 2.
  const std::vector<double> baseline = {1.0, 1.0};
  const std::vector<double> candidate = {1.0, 0.5};
  const interval s = bootstrap_speedup(baseline, candidate, 7);
  EXPECT_DOUBLE_EQ(s.point, 4.0 / 3.0);
  EXPECT_EQ(s.low, 1.0);
  EXPECT_EQ(s.high, 2.0);
}

TEST(Bootstrap, IdenticalPairsGiveADegenerateIntervalAtTheRatio) {
  const std::vector<double> baseline(5, 3.0);
  const std::vector<double> candidate(5, 2.4);
  const interval s = bootstrap_speedup(baseline, candidate, 1);
  EXPECT_EQ(s.point, 3.0 / 2.4);
  EXPECT_EQ(s.low, 3.0 / 2.4);
  EXPECT_EQ(s.high, 3.0 / 2.4);
}

TEST(Bootstrap, ResamplesWholeSessions) {
  // Each session's candidate equals its baseline; only a resample that keeps the pairs together
  // gives the ratio 1 every time (independent draws would range from 1/16 to 16).
  const std::vector<double> times = {1.0, 2.0, 4.0, 8.0, 16.0};
  const interval s = bootstrap_speedup(times, times, 3);
  EXPECT_EQ(s.point, 1.0);
  EXPECT_EQ(s.low, 1.0);
  EXPECT_EQ(s.high, 1.0);
}

TEST(Bootstrap, EverySessionTenPercentFasterLiesAboveOne) {
  // Candidate = baseline / 1.1 with up to 1% jitter.
  const std::vector<double> baseline = {100.0, 101.0, 99.0, 100.5, 99.5};
  const std::vector<double> candidate = {100.0 / 1.1 * 1.01, 101.0 / 1.1 * 0.99, 99.0 / 1.1 * 1.005,
                                         100.5 / 1.1 * 0.995, 99.5 / 1.1};
  const interval s = bootstrap_speedup(baseline, candidate, 42);
  EXPECT_DOUBLE_EQ(s.point, 100.0 / (101.0 / 1.1 * 0.99));  // the middle candidate
  EXPECT_LE(s.low, s.point);
  EXPECT_GE(s.high, s.point);
  EXPECT_GT(s.low, 1.0);
  EXPECT_GT(s.low, 1.07);   // no resample can go below min(b) / max(c) = 1.078
  EXPECT_LT(s.high, 1.12);  // nor above max(b) / min(c) = 1.117
}

TEST(Bootstrap, HalfFasterHalfSlowerStraddlesOne) {
  const std::vector<double> baseline = {100.0, 100.4, 99.8, 100.2, 99.6};
  const std::vector<double> candidate = {90.0, 110.0, 91.0, 109.0, 100.0};
  const interval s = bootstrap_speedup(baseline, candidate, 42);
  EXPECT_DOUBLE_EQ(s.point, 1.0);
  EXPECT_LE(s.low, s.point);
  EXPECT_GE(s.high, s.point);
  EXPECT_LT(s.low, 1.0);
  EXPECT_GT(s.high, 1.0);
}

TEST(Bootstrap, DeterministicForASeed) {
  std::vector<double> baseline;
  std::vector<double> candidate;
  for (int i = 0; i < 20; ++i) {
    baseline.push_back(100.0 + 0.37 * i - 0.011 * i * i);
    candidate.push_back(91.0 + 0.53 * ((i * 7) % 11) - 0.02 * i);
  }
  const interval a = bootstrap_speedup(baseline, candidate, 2024);
  const interval b = bootstrap_speedup(baseline, candidate, 2024);
  const interval c = bootstrap_speedup(baseline, candidate, 2025);
  EXPECT_EQ(a.low, b.low);
  EXPECT_EQ(a.high, b.high);
  EXPECT_EQ(a.point, b.point);
  EXPECT_TRUE(a.low != c.low || a.high != c.high) << "another seed must draw other resamples";
  EXPECT_EQ(a.point, c.point);  // the point uses every session, no resampling
}

TEST(Bootstrap, RejectsMalformedInput) {
  const std::vector<double> three = {1.0, 2.0, 3.0};
  const std::vector<double> two = {1.0, 2.0};
  const std::vector<double> empty;
  const std::vector<double> with_zero = {1.0, 0.0, 3.0};
  const std::vector<double> negative = {1.0, -2.0, 3.0};
  const std::vector<double> with_nan = {1.0, std::numeric_limits<double>::quiet_NaN(), 3.0};
  const std::vector<double> with_inf = {1.0, std::numeric_limits<double>::infinity(), 3.0};
  EXPECT_THROW(bootstrap_speedup(three, two, 1), input_error);
  EXPECT_THROW(bootstrap_speedup(empty, empty, 1), input_error);
  EXPECT_THROW(bootstrap_speedup(three, with_zero, 1), input_error);
  EXPECT_THROW(bootstrap_speedup(negative, three, 1), input_error);
  EXPECT_THROW(bootstrap_speedup(three, with_nan, 1), input_error);
  EXPECT_THROW(bootstrap_speedup(with_inf, three, 1), input_error);
  EXPECT_THROW(bootstrap_speedup(three, three, 1, 0), input_error);
  EXPECT_THROW(bootstrap_speedup(three, three, 1, 100, 0.0), input_error);
  EXPECT_THROW(bootstrap_speedup(three, three, 1, 100, 1.0), input_error);
  EXPECT_NO_THROW(bootstrap_speedup(three, three, 1, 1, 0.5));
}

// The ranks come from the binomial distribution: at n = 32 and 99.9%, P(X <= 6) = 0.00025 and
// P(X <= 7) = 0.00098, so the interval runs from the 7th to the 26th of the sorted ratios.
TEST(MedianRatioInterval, IsThePairOfOrderStatisticsTheBinomialNames) {
  std::vector<double> numerators;
  std::vector<double> denominators;
  for (int i = 1; i <= 32; ++i) {
    numerators.push_back(100.0 + i);  // ratios 1.01 .. 1.32 in a shuffled order of pairs
    denominators.push_back(100.0);
  }
  std::swap(numerators[3], numerators[20]);
  const interval r = median_ratio_interval(numerators, denominators, 0.999);
  EXPECT_DOUBLE_EQ(r.low, 1.07);
  EXPECT_DOUBLE_EQ(r.high, 1.26);
  EXPECT_DOUBLE_EQ(r.point, (1.16 + 1.17) / 2.0);
  // At 95% the ranks are 10 and 23 (P(X <= 9) = 0.0100, P(X <= 10) = 0.0251).
  const interval wide = median_ratio_interval(numerators, denominators, 0.95);
  EXPECT_DOUBLE_EQ(wide.low, 1.10);
  EXPECT_DOUBLE_EQ(wide.high, 1.23);
}

TEST(MedianRatioInterval, PairsAreKeptTogether) {
  // Each pair's ratio is exactly 1.05 however far apart the pairs' times are.
  std::vector<double> numerators;
  std::vector<double> denominators;
  for (int i = 0; i < 16; ++i) {
    denominators.push_back(10.0 * (i + 1));
    numerators.push_back(denominators.back() * 1.05);
  }
  const interval r = median_ratio_interval(numerators, denominators, 0.999);
  EXPECT_DOUBLE_EQ(r.low, 1.05);
  EXPECT_DOUBLE_EQ(r.high, 1.05);
}

TEST(MedianRatioInterval, TooFewPairsExcludeNothing) {
  // 2^-10 = 0.00098 > 0.0005: ten pairs cannot hold the median at 99.9% by any two of them.
  EXPECT_EQ(pairs_for_an_interval(0.999), 11);
  EXPECT_EQ(pairs_for_an_interval(0.95), 6);
  const std::vector<double> ten(10, 2.0);
  const std::vector<double> ones(10, 1.0);
  const interval r = median_ratio_interval(ten, ones, 0.999);
  EXPECT_EQ(r.low, 0.0);
  EXPECT_TRUE(std::isinf(r.high));
  EXPECT_EQ(r.point, 2.0);
  const std::vector<double> eleven(11, 2.0);
  const std::vector<double> ones11(11, 1.0);
  EXPECT_EQ(median_ratio_interval(eleven, ones11, 0.999).low, 2.0);
}

TEST(MedianRatioInterval, BadInputIsRefused) {
  const std::vector<double> two = {1.0, 2.0};
  const std::vector<double> three = {1.0, 2.0, 3.0};
  const std::vector<double> zero = {1.0, 0.0};
  const std::vector<double> none;
  EXPECT_THROW(median_ratio_interval(two, three, 0.9), input_error);
  EXPECT_THROW(median_ratio_interval(none, none, 0.9), input_error);
  EXPECT_THROW(median_ratio_interval(two, zero, 0.9), input_error);
  EXPECT_THROW(median_ratio_interval(two, two, 1.0), input_error);
  EXPECT_THROW(pairs_for_an_interval(0.0), input_error);
}

}  // namespace
}  // namespace blaster
