// RMSNorm over the hidden size of x[T, H], with a weight per hidden element (vLLM's rms_norm):
//   out[t, j] = x[t, j] / sqrt(mean over j of x[t, j]^2 + eps) * weight[j]
#include <cmath>

#include "core/parallel_for.hpp"
#include "tasks/reference.hpp"

namespace blaster {

void rms_norm_reference(const reference_context& io) {
  const std::int64_t tokens = io.dim("T");
  const std::int64_t hidden = io.dim("H");
  const double eps = io.value("eps");
  const auto x = io.input("x");
  const auto weight = io.input("weight");
  const auto out = io.output("out");
  parallel_for(tokens, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t t = begin; t < end; ++t) {
      const auto row = static_cast<std::size_t>(t * hidden);
      double sum_squares = 0.0;
      for (std::int64_t j = 0; j < hidden; ++j) {
        const double v = x[row + static_cast<std::size_t>(j)];
        sum_squares += v * v;
      }
      const double scale = 1.0 / std::sqrt(sum_squares / static_cast<double>(hidden) + eps);
      for (std::int64_t j = 0; j < hidden; ++j) {
        const auto i = row + static_cast<std::size_t>(j);
        out[i] = x[i] * scale * weight[static_cast<std::size_t>(j)];
      }
    }
  });
}

}  // namespace blaster
