#pragma once

#include <array>
#include <cstdint>

namespace blaster {

// The distribution of normalized errors |c - r| / (atol + rtol*|r|) over an output, in bins
// read straight off the bits of the double: each power of two from 2^lowest_exponent to
// 2^highest_exponent is split into sub_bins equal parts by the top mantissa bits. Quantiles of
// a hundred million elements then need no sort and no logarithm per element. A quantile is
// reported as the upper edge of its bin: never below the true value, at most a factor
// (1 + 1/sub_bins) above it.
class error_histogram {
 public:
  static constexpr int sub_bin_bits = 5;
  static constexpr int sub_bins = 1 << sub_bin_bits;
  static constexpr int lowest_exponent = -30;  // about 1e-9
  static constexpr int highest_exponent = 20;  // about 1e6

  void add(double normalized_error) noexcept;
  void merge(const error_histogram& other) noexcept;

  [[nodiscard]] std::int64_t count() const noexcept { return count_; }
  // q in [0, 1]; 0 for an empty histogram, infinity when the quantile falls on a non-finite
  // or out-of-range error.
  [[nodiscard]] double quantile(double q) const;

 private:
  static constexpr int range_bins = (highest_exponent - lowest_exponent) * sub_bins;
  // [0]: below 2^lowest_exponent, exact zeros too; [1 + i]: bin i; [last]: above the range.
  std::array<std::int64_t, range_bins + 2> bins_{};
  std::int64_t count_ = 0;
};

}  // namespace blaster
