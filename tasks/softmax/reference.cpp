// Softmax over dim 1 of x[B, D] (KernelBench level 1, task 023):
//   out[b, j] = exp(x[b, j] - m) / sum over k of exp(x[b, k] - m),  m = max over k of x[b, k]
// Subtracting the row max changes nothing mathematically and keeps exp in range.
#include <algorithm>
#include <cmath>

#include "core/parallel_for.hpp"
#include "tasks/reference.hpp"

namespace blaster {

void softmax_reference(const reference_context& io) {
  const std::int64_t rows = io.dim("B");
  const std::int64_t length = io.dim("D");
  const auto x = io.input("x");
  const auto out = io.output("out");
  if (length == 0) return;
  parallel_for(rows, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t row = begin; row < end; ++row) {
      const auto first = static_cast<std::size_t>(row * length);
      const auto in = x.subspan(first, static_cast<std::size_t>(length));
      const auto to = out.subspan(first, static_cast<std::size_t>(length));
      const double m = *std::max_element(in.begin(), in.end());
      double sum = 0.0;
      for (std::size_t j = 0; j < in.size(); ++j) {
        to[j] = std::exp(in[j] - m);
        sum += to[j];
      }
      for (double& v : to) v /= sum;
    }
  });
}

}  // namespace blaster
