// ReLU (KernelBench level 1, task 019): out = max(x, 0).
#include "tasks/reference.hpp"
#include "core/parallel_for.hpp"

namespace blaster {

void relu_reference(const reference_context& io) {
  const std::int64_t n = io.dim("B") * io.dim("D");
  const auto x = io.input("x");
  const auto out = io.output("out");
  parallel_for(n, [&](std::int64_t begin, std::int64_t end) {
    for (auto i = static_cast<std::size_t>(begin); i < static_cast<std::size_t>(end); ++i) {
      out[i] = x[i] > 0.0 ? x[i] : 0.0;
    }
  });
}

}  // namespace blaster
