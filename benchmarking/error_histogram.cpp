#include "benchmarking/error_histogram.hpp"

#include <cmath>
#include <limits>

namespace blaster {

void error_histogram::add(double normalized_error) {
  ++count_;
  const double lowest = std::pow(10.0, lowest_decade);
  if (!(normalized_error >= lowest)) {  // zeros, and NaN never reaches here as an error
    ++bins_[0];
    return;
  }
  const double position = (std::log10(normalized_error) - lowest_decade) * bins_per_decade;
  if (!std::isfinite(position) || position >= log_bins) {
    ++bins_[log_bins + 1];
    return;
  }
  ++bins_[1 + static_cast<std::size_t>(position)];
}

void error_histogram::merge(const error_histogram& other) {
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
    if (i == 0) return std::pow(10.0, lowest_decade);
    if (i == bins_.size() - 1) return std::numeric_limits<double>::infinity();
    return std::pow(10.0, lowest_decade + static_cast<double>(i) / bins_per_decade);
  }
  return std::numeric_limits<double>::infinity();
}

}  // namespace blaster
