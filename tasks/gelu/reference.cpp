// GELU in its exact erf form (KernelBench level 1, task 026):
//   out = 0.5 * x * (1 + erf(x / sqrt(2)))
#include <cmath>
#include <numbers>

#include "core/parallel_for.hpp"
#include "tasks/reference.hpp"

namespace blaster {

void gelu_reference(const reference_context& io) {
  const std::int64_t n = io.dim("B") * io.dim("D");
  const auto x = io.input("x");
  const auto out = io.output("out");
  parallel_for(n, [&](std::int64_t begin, std::int64_t end) {
    for (auto i = static_cast<std::size_t>(begin); i < static_cast<std::size_t>(end); ++i) {
      out[i] = 0.5 * x[i] * (1.0 + std::erf(x[i] / std::numbers::sqrt2));
    }
  });
}

}  // namespace blaster
