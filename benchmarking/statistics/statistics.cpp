#include "benchmarking/statistics/statistics.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "core/error.hpp"

namespace blaster {
namespace {

// The median of `values`, reordering them; the bootstrap calls this in its inner loop and so
// reuses its buffers instead of copying.
double median_in_place(std::span<double> values) {
  if (values.empty()) return 0.0;
  const std::size_t mid = values.size() / 2;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(mid);
  std::nth_element(values.begin(), middle, values.end());
  const double upper = *middle;
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), middle);
  return (lower + upper) / 2.0;
}

// Type 7 quantile of values already sorted ascending.
double sorted_quantile(std::span<const double> sorted, double q) {
  if (sorted.empty()) return 0.0;
  const double h = static_cast<double>(sorted.size() - 1) * q;
  const auto below = static_cast<std::size_t>(std::floor(h));
  if (below + 1 >= sorted.size()) return sorted.back();
  return sorted[below] + (h - static_cast<double>(below)) * (sorted[below + 1] - sorted[below]);
}

void require_positive(std::span<const double> values, std::string_view what) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!(values[i] > 0.0) || !std::isfinite(values[i])) {
      BLASTER_INPUT_ERROR("{}[{}] is {}; session medians must be positive and finite", what, i,
                          values[i]);
    }
  }
}

}  // namespace

double median(std::span<const double> values) {
  std::vector<double> copy(values.begin(), values.end());
  return median_in_place(copy);
}

double mean(std::span<const double> values) {
  if (values.empty()) return 0.0;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

double stddev(std::span<const double> values) {
  if (values.size() < 2) return 0.0;
  // Two passes: summing squares of deviations from the mean loses less than sum(x^2) - n*mean^2.
  const double m = mean(values);
  double squares = 0.0;
  for (const double x : values) squares += (x - m) * (x - m);
  return std::sqrt(squares / static_cast<double>(values.size() - 1));
}

double relative_noise(std::span<const double> values) {
  const double deviation = stddev(values);
  const double m = mean(values);
  if (m == 0.0) return deviation == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
  return deviation / std::abs(m);
}

double min(std::span<const double> values) {
  if (values.empty()) return 0.0;
  return *std::min_element(values.begin(), values.end());
}

double max(std::span<const double> values) {
  if (values.empty()) return 0.0;
  return *std::max_element(values.begin(), values.end());
}

double geometric_mean(std::span<const double> values) {
  if (values.empty()) return std::nan("");
  double log_sum = 0.0;
  for (const double v : values) log_sum += std::log(v);
  return std::exp(log_sum / static_cast<double>(values.size()));
}

double spread(std::span<const double> values) {
  if (values.empty()) return 0.0;
  const double smallest = min(values);
  if (!(smallest > 0.0)) {
    BLASTER_INPUT_ERROR("the spread max/min - 1 needs positive values; the smallest is {}",
                        smallest);
  }
  return max(values) / smallest - 1.0;
}

double quantile(std::span<const double> values, double q) {
  if (!(q >= 0.0 && q <= 1.0)) BLASTER_INPUT_ERROR("quantile {} is outside [0, 1]", q);
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  return sorted_quantile(sorted, q);
}

std::span<const statistic> standard_statistics() {
  static constexpr std::array<statistic, 6> registry = {{
      {"median", &median},
      {"mean", &mean},
      {"stddev", &stddev},
      {"relative_noise", &relative_noise},
      {"min", &min},
      {"max", &max},
  }};
  return registry;
}

interval bootstrap_speedup(std::span<const double> baseline_medians,
                           std::span<const double> candidate_medians, std::uint64_t seed,
                           int resamples, double confidence) {
  const std::size_t n = baseline_medians.size();
  if (n == 0 || candidate_medians.size() != n) {
    BLASTER_INPUT_ERROR(
        "the bootstrap pairs sessions by index: {} baseline and {} candidate medians; both must "
        "be the same, nonzero count",
        n, candidate_medians.size());
  }
  require_positive(baseline_medians, "baseline_medians");
  require_positive(candidate_medians, "candidate_medians");
  if (resamples < 1)
    BLASTER_INPUT_ERROR("bootstrap resamples is {}; it must be at least 1", resamples);
  if (!(confidence > 0.0 && confidence < 1.0)) {
    BLASTER_INPUT_ERROR("bootstrap confidence {} is outside (0, 1)", confidence);
  }

  interval out;
  out.point = median(baseline_medians) / median(candidate_medians);

  std::mt19937_64 engine(seed);
  std::uniform_int_distribution<std::size_t> pick(0, n - 1);
  std::vector<double> drawn_baseline(n);
  std::vector<double> drawn_candidate(n);
  std::vector<double> ratios(static_cast<std::size_t>(resamples));
  for (double& ratio : ratios) {
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t session = pick(engine);
      drawn_baseline[k] = baseline_medians[session];
      drawn_candidate[k] = candidate_medians[session];
    }
    ratio = median_in_place(drawn_baseline) / median_in_place(drawn_candidate);
  }
  std::sort(ratios.begin(), ratios.end());
  const double tail = (1.0 - confidence) / 2.0;
  out.low = sorted_quantile(ratios, tail);
  out.high = sorted_quantile(ratios, 1.0 - tail);
  return out;
}

namespace {

// The largest rank k with P(Binomial(n, 1/2) < k) <= tail, or 0 where even k = 1 exceeds it.
std::size_t order_statistic_rank(std::size_t n, double tail) {
  // P(X = j) built up in logs: n choose j over 2^n underflows a double beyond n = 1000.
  double below = 0.0;  // P(X < k)
  std::size_t k = 0;
  for (std::size_t j = 0; j < n; ++j) {
    const double log_p = std::lgamma(static_cast<double>(n) + 1.0) -
                         std::lgamma(static_cast<double>(j) + 1.0) -
                         std::lgamma(static_cast<double>(n - j) + 1.0) -
                         static_cast<double>(n) * std::log(2.0);
    below += std::exp(log_p);  // now P(X <= j) = P(X < j + 1)
    if (below > tail) break;
    k = j + 1;
  }
  return std::min(k, (n + 1) / 2);
}

}  // namespace

interval median_ratio_interval(std::span<const double> numerators,
                               std::span<const double> denominators, double confidence) {
  const std::size_t n = numerators.size();
  if (n == 0 || denominators.size() != n) {
    BLASTER_INPUT_ERROR(
        "a ratio interval pairs values by index: {} numerators and {} denominators; both must be "
        "the same, nonzero count",
        n, denominators.size());
  }
  require_positive(numerators, "numerators");
  require_positive(denominators, "denominators");
  if (!(confidence > 0.0 && confidence < 1.0)) {
    BLASTER_INPUT_ERROR("ratio interval confidence {} is outside (0, 1)", confidence);
  }
  std::vector<double> ratios(n);
  for (std::size_t i = 0; i < n; ++i) ratios[i] = numerators[i] / denominators[i];
  std::sort(ratios.begin(), ratios.end());
  interval out{.low = 0.0, .high = std::numeric_limits<double>::infinity(), .point = 0.0};
  out.point = median(ratios);
  const std::size_t k = order_statistic_rank(n, (1.0 - confidence) / 2.0);
  if (k >= 1) {
    out.low = ratios[k - 1];
    out.high = ratios[n - k];
  }
  return out;
}

int pairs_for_an_interval(double confidence) {
  if (!(confidence > 0.0 && confidence < 1.0)) {
    BLASTER_INPUT_ERROR("ratio interval confidence {} is outside (0, 1)", confidence);
  }
  std::size_t n = 1;
  while (order_statistic_rank(n, (1.0 - confidence) / 2.0) == 0) ++n;
  return static_cast<int>(n);
}

int calibrated_inner_count(double probe_ms_per_launch, double target_sample_ms, int max_inner) {
  if (max_inner < 1) BLASTER_INPUT_ERROR("max_inner is {}; it must be at least 1", max_inner);
  if (!(target_sample_ms > 0.0)) return 1;
  const double probe =
      probe_ms_per_launch > 0.0 ? probe_ms_per_launch : std::numeric_limits<double>::min();
  // Clamp in double: the quotient can exceed any int (or be infinite) before it is clamped.
  const double count =
      std::clamp(std::ceil(target_sample_ms / probe), 1.0, static_cast<double>(max_inner));
  return static_cast<int>(count);
}

}  // namespace blaster
