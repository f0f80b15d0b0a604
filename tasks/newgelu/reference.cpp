// MinGPT's "new" GELU, the tanh approximation (KernelBench level 1, task 088):
//   out = 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
#include <cmath>
#include <numbers>

#include "core/parallel_for.hpp"
#include "tasks/reference.hpp"

namespace blaster {

void newgelu_reference(const reference_context& io) {
  const std::int64_t n = io.dim("B") * io.dim("D");
  const double c = std::sqrt(2.0 / std::numbers::pi);
  const auto x = io.input("x");
  const auto out = io.output("out");
  parallel_for(n, [&](std::int64_t begin, std::int64_t end) {
    for (auto i = static_cast<std::size_t>(begin); i < static_cast<std::size_t>(end); ++i) {
      const double v = x[i];
      out[i] = 0.5 * v * (1.0 + std::tanh(c * (v + 0.044715 * v * v * v)));
    }
  });
}

}  // namespace blaster
