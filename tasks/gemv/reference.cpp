// Decode's projection (a linear layer on a few tokens, the weight stored a row per output):
//   y[m, n] = sum over k of x[m, k] * w[n, k]
#include "tasks/reference.hpp"
#include "core/parallel_for.hpp"

namespace blaster {

void gemv_reference(const reference_context& io) {
  const std::int64_t tokens = io.dim("M");
  const std::int64_t outputs = io.dim("N");
  const std::int64_t depth = io.dim("K");
  const auto x = io.input("x");
  const auto w = io.input("w");
  const auto y = io.output("y");
  parallel_for(outputs, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t n = begin; n < end; ++n) {
      const auto row = static_cast<std::size_t>(n * depth);
      for (std::int64_t m = 0; m < tokens; ++m) {
        const auto token = static_cast<std::size_t>(m * depth);
        double sum = 0.0;
        for (std::int64_t k = 0; k < depth; ++k) {
          sum += x[token + static_cast<std::size_t>(k)] * w[row + static_cast<std::size_t>(k)];
        }
        y[static_cast<std::size_t>(m * outputs + n)] = sum;
      }
    }
  });
}

}  // namespace blaster
