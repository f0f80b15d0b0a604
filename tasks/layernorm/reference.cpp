// LayerNorm over the last three dims of x[B, C, H, W] (KernelBench level 1, task 040), with
// weight and bias of shape [C, H, W]:
//   out[b, i] = (x[b, i] - mean_b) / sqrt(var_b + eps) * weight[i] + bias[i]
// where mean_b and the biased variance var_b are taken over the C*H*W elements of batch b.
#include <cmath>
#include <vector>

#include "core/parallel_for.hpp"
#include "tasks/reference.hpp"

namespace blaster {

void layernorm_reference(const reference_context& io) {
  const std::int64_t rows = io.dim("B");
  const std::int64_t length = io.dim("C") * io.dim("H") * io.dim("W");
  const double eps = io.value("eps");
  const auto x = io.input("x");
  const auto weight = io.input("weight");
  const auto bias = io.input("bias");
  const auto out = io.output("out");
  if (length == 0) return;
  // Per row, two passes: the mean, then the squared deviations from it, so that a mean far
  // from zero costs no precision.
  std::vector<double> mean(static_cast<std::size_t>(rows));
  std::vector<double> scale(static_cast<std::size_t>(rows));
  parallel_for(rows, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t row = begin; row < end; ++row) {
      const auto in =
          x.subspan(static_cast<std::size_t>(row * length), static_cast<std::size_t>(length));
      double sum = 0.0;
      for (double v : in) sum += v;
      const double m = sum / static_cast<double>(length);
      double squares = 0.0;
      for (double v : in) squares += (v - m) * (v - m);
      mean[static_cast<std::size_t>(row)] = m;
      scale[static_cast<std::size_t>(row)] =
          1.0 / std::sqrt(squares / static_cast<double>(length) + eps);
    }
  });
  parallel_for(rows * length, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      const auto row = static_cast<std::size_t>(i / length);
      const auto k = static_cast<std::size_t>(i % length);
      const auto at = static_cast<std::size_t>(i);
      out[at] = (x[at] - mean[row]) * scale[row] * weight[k] + bias[k];
    }
  });
}

}  // namespace blaster
