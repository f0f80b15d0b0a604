// Sum over dim 1 of x[B, D1, D2] with keepdim (KernelBench level 1, task 047):
//   out[b, 0, j] = sum over i of x[b, i, j]
#include "tasks/reference.hpp"
#include "core/parallel_for.hpp"

namespace blaster {

void sum_dim1_reference(const reference_context& io) {
  const std::int64_t batches = io.dim("B");
  const std::int64_t rows = io.dim("D1");
  const std::int64_t columns = io.dim("D2");
  const auto x = io.input("x");
  const auto out = io.output("out");
  parallel_for(batches * columns, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t position = begin; position < end; ++position) {
      const std::int64_t b = position / columns;
      const std::int64_t j = position % columns;
      double sum = 0.0;
      for (std::int64_t i = 0; i < rows; ++i) {
        sum += x[static_cast<std::size_t>((b * rows + i) * columns + j)];
      }
      out[static_cast<std::size_t>(position)] = sum;
    }
  });
}

}  // namespace blaster
