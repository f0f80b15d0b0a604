#include "benchmarking/gate/detail/error_histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace blaster {

void error_histogram::add(double normalized_error) noexcept {
  ++count_;
  if (!(normalized_error >= std::ldexp(1.0, lowest_exponent))) {  // zeros; NaN never comes here
    ++bins_[0];
    return;
  }
  const auto bits = std::bit_cast<std::uint64_t>(normalized_error);
  const int exponent = static_cast<int>((bits >> 52U) & 0x7FFU) - 1023;
  if (exponent >= highest_exponent) {  // infinity too
    ++bins_[range_bins + 1];
    return;
  }
  const auto sub = static_cast<int>((bits >> (52U - sub_bin_bits)) & (sub_bins - 1U));
  ++bins_[1 + static_cast<std::size_t>((exponent - lowest_exponent) * sub_bins + sub)];
}

void error_histogram::merge(const error_histogram& other) noexcept {
  for (std::size_t i = 0; i < bins_.size(); ++i) bins_[i] += other.bins_[i];
  count_ += other.count_;
}

double error_histogram::quantile(double q) const {
  if (count_ == 0) return 0.0;
  // The smallest bin holding the ceil(q * count)-th element.
  const auto rank = std::max<std::int64_t>(
      1, static_cast<std::int64_t>(std::ceil(q * static_cast<double>(count_))));
  std::int64_t seen = 0;
  for (std::size_t i = 0; i < bins_.size(); ++i) {
    seen += bins_[i];
    if (seen < rank) continue;
    if (i == 0) return std::ldexp(1.0, lowest_exponent);
    if (i == bins_.size() - 1) return std::numeric_limits<double>::infinity();
    const auto bin = static_cast<int>(i - 1);
    const int exponent = lowest_exponent + bin / sub_bins;
    const int sub = bin % sub_bins;
    return std::ldexp(1.0 + static_cast<double>(sub + 1) / sub_bins, exponent);
  }
  return std::numeric_limits<double>::infinity();
}

}  // namespace blaster
