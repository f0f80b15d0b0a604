// The residual add before a layer's RMSNorm, fused (vLLM's fused_add_rms_norm, with the sum written
// to an output of its own rather than over the residual, since inputs must not change):
//   residual_out[t, j] = x[t, j] + residual[t, j]
//   out[t, j] = residual_out[t, j] / sqrt(mean over j of residual_out[t, j]^2 + eps) * weight[j]
// The sum is exact here; a kernel stores it in bf16 and may normalize the stored or the unrounded
// sum: they differ by at most half a bf16 step, inside the tolerance.
#include <cmath>

#include "core/parallel_for.hpp"
#include "tasks/reference.hpp"

namespace blaster {

void fused_add_rms_norm_reference(const reference_context& io) {
  const std::int64_t tokens = io.dim("T");
  const std::int64_t hidden = io.dim("H");
  const double eps = io.value("eps");
  const auto x = io.input("x");
  const auto residual = io.input("residual");
  const auto weight = io.input("weight");
  const auto out = io.output("out");
  const auto residual_out = io.output("residual_out");
  parallel_for(tokens, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t t = begin; t < end; ++t) {
      const auto row = static_cast<std::size_t>(t * hidden);
      double sum_squares = 0.0;
      for (std::int64_t j = 0; j < hidden; ++j) {
        const auto i = row + static_cast<std::size_t>(j);
        residual_out[i] = x[i] + residual[i];
        sum_squares += residual_out[i] * residual_out[i];
      }
      const double scale = 1.0 / std::sqrt(sum_squares / static_cast<double>(hidden) + eps);
      for (std::int64_t j = 0; j < hidden; ++j) {
        const auto i = row + static_cast<std::size_t>(j);
        out[i] = residual_out[i] * scale * weight[static_cast<std::size_t>(j)];
      }
    }
  });
}

}  // namespace blaster
