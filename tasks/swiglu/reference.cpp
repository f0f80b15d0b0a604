// SwiGLU's activation over x[T, 2I], the gate half first (vLLM's silu_and_mul):
//   out[t, j] = silu(x[t, j]) * x[t, I + j],  silu(a) = a / (1 + exp(-a))
#include <cmath>

#include "core/parallel_for.hpp"
#include "tasks/reference.hpp"

namespace blaster {

void swiglu_reference(const reference_context& io) {
  const std::int64_t tokens = io.dim("T");
  const std::int64_t width = io.dim("I");
  const auto x = io.input("x");
  const auto out = io.output("out");
  parallel_for(tokens, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t t = begin; t < end; ++t) {
      for (std::int64_t j = 0; j < width; ++j) {
        const double gate = x[static_cast<std::size_t>(t * 2 * width + j)];
        const double up = x[static_cast<std::size_t>(t * 2 * width + width + j)];
        out[static_cast<std::size_t>(t * width + j)] = gate / (1.0 + std::exp(-gate)) * up;
      }
    }
  });
}

}  // namespace blaster
