#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace blaster {

// Aggregates over a set of samples, as plain functions so that every report applies them the
// same way (google/benchmark's statistics.cc). Empty input gives 0 unless stated otherwise.

// The middle value of the sorted values; the mean of the two middle values for an even count.
double median(std::span<const double> values);

// The arithmetic mean: sum(x) / n.
double mean(std::span<const double> values);

// The sample standard deviation: sqrt(sum((x - mean)^2) / (n - 1)); 0 for fewer than 2 values.
double stddev(std::span<const double> values);

// The coefficient of variation, stddev / mean (nvbench's "stdrel"); 0 for fewer than 2 values.
// A zero mean with a nonzero deviation gives infinity: no bound is met by it.
double relative_noise(std::span<const double> values);

double min(std::span<const double> values);
double max(std::span<const double> values);

// exp(mean(log x)): the mean of ratios such as speedups. NaN for no values.
double geometric_mean(std::span<const double> values);

// max / min - 1: how far the largest value lies above the smallest, as a fraction (0.05 is 5%).
// Throws input_error where the smallest value is not positive, as the ratio then means nothing.
double spread(std::span<const double> values);

// The q-quantile by linear interpolation between order statistics (Hyndman and Fan's type 7,
// the default of R and NumPy): with x sorted ascending and h = (n - 1) * q,
// Q(q) = x[floor(h)] + (h - floor(h)) * (x[floor(h) + 1] - x[floor(h)]).
// Q(0) is the minimum, Q(1) the maximum, Q(0.5) the median. Throws input_error unless
// 0 <= q <= 1.
double quantile(std::span<const double> values, double q);

// A named aggregate; reports iterate over a registry of these instead of naming each one.
struct statistic {
  std::string_view name;
  double (*compute)(std::span<const double>);
};

// median, mean, stddev, relative_noise, min, max, in that order.
std::span<const statistic> standard_statistics();

// A confidence interval around a point estimate.
struct interval {
  double low = 0.0;
  double high = 0.0;
  double point = 0.0;
};

// The speedup of a candidate over a baseline, median(baseline) / median(candidate) (above 1 is
// faster), with its percentile bootstrap interval. Sessions are paired by index: session i ran
// the baseline and the candidate back to back, so a resample draws whole sessions, n indices
// with replacement, which keeps what a session shares (clocks, temperature) in each pair.
// `point` is the ratio over all sessions; [low, high] are the (1 - confidence) / 2 and
// (1 + confidence) / 2 quantiles (as `quantile` defines them) of the resampled ratios.
// The same seed gives the same interval with the same standard library (the distributions of
// <random> are not specified bit for bit). Throws input_error for sizes that differ or are zero,
// values that are not positive and finite, resamples < 1 or confidence outside (0, 1).
interval bootstrap_speedup(std::span<const double> baseline_medians,
                           std::span<const double> candidate_medians, std::uint64_t seed,
                           int resamples = 10000, double confidence = 0.95);

// The median of the paired ratios numerators[i] / denominators[i], with a distribution-free
// interval: the order statistics r(k) and r(n + 1 - k) of the sorted ratios, k the largest rank
// with P(Binomial(n, 1/2) < k) <= (1 - confidence) / 2. It holds the ratios' median with at least
// `confidence` whatever their distribution, given pairs independent of each other, and needs no
// seed. With too few pairs for any k >= 1 the interval is [0, infinity]: nothing can be excluded.
// Throws input_error for sizes that differ or are zero, values that are not positive and finite,
// or confidence outside (0, 1).
interval median_ratio_interval(std::span<const double> numerators,
                               std::span<const double> denominators, double confidence);

// The fewest pairs for which median_ratio_interval at `confidence` is finite on both sides.
int pairs_for_an_interval(double confidence);

// Hot mode's launches per sample: ceil(target / probe), clamped to [1, max_inner], so that a
// sample of that many back-to-back launches lasts about target_sample_ms. A probe of 0 or less
// (a launch faster than the timer resolves) counts as the smallest positive time, hence
// max_inner. Throws input_error for max_inner < 1.
int calibrated_inner_count(double probe_ms_per_launch, double target_sample_ms,
                           int max_inner = 100000);

}  // namespace blaster
