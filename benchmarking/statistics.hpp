#pragma once

#include <span>

namespace blaster {

// The middle value; the mean of the two middle values for an even count. Empty input is 0.
double median(std::span<const double> values);

}  // namespace blaster
