// RMSNorm over dim 1 of x[B, C, H, W] (KernelBench level 1, task 036):
//   out = x / sqrt(mean over c of x^2 + eps)
#include <cmath>

#include "core/parallel_for.hpp"
#include "tasks/reference.hpp"

namespace blaster {

void rmsnorm_reference(const reference_context& io) {
  const std::int64_t batches = io.dim("B");
  const std::int64_t channels = io.dim("C");
  const std::int64_t plane = io.dim("H") * io.dim("W");
  const double eps = io.value("eps");
  const auto x = io.input("x");
  const auto out = io.output("out");
  parallel_for(batches * plane, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t position = begin; position < end; ++position) {
      const std::int64_t b = position / plane;
      const std::int64_t p = position % plane;
      const std::int64_t base = b * channels * plane + p;
      double sum_squares = 0.0;
      for (std::int64_t c = 0; c < channels; ++c) {
        const double v = x[static_cast<std::size_t>(base + c * plane)];
        sum_squares += v * v;
      }
      const double scale = 1.0 / std::sqrt(sum_squares / static_cast<double>(channels) + eps);
      for (std::int64_t c = 0; c < channels; ++c) {
        const auto i = static_cast<std::size_t>(base + c * plane);
        out[i] = x[i] * scale;
      }
    }
  });
}

}  // namespace blaster
