#pragma once

#include <array>
#include <cstdint>

namespace blaster {

// The distribution of normalized errors |c - r| / (atol + rtol*|r|) over an output, kept in
// logarithmic bins (bins_per_decade per factor of ten, from 1e-9 to 1e6) so that quantiles of a
// hundred million elements need no sort. A quantile is reported as the upper edge of its bin:
// never below the true value, at most 10^(1/bins_per_decade) above it.
class error_histogram {
 public:
  static constexpr int bins_per_decade = 64;
  static constexpr int lowest_decade = -9;
  static constexpr int highest_decade = 6;

  void add(double normalized_error);
  void merge(const error_histogram& other);

  [[nodiscard]] std::int64_t count() const noexcept { return count_; }
  // q in [0, 1]; 0 for an empty histogram, infinity when the quantile falls on a non-finite
  // or out-of-range error.
  [[nodiscard]] double quantile(double q) const;

 private:
  static constexpr int log_bins = (highest_decade - lowest_decade) * bins_per_decade;
  // [0]: below 10^lowest_decade, exact zeros too; [1 + i]: log bin i; [last]: above the range.
  std::array<std::int64_t, log_bins + 2> bins_{};
  std::int64_t count_ = 0;
};

}  // namespace blaster
