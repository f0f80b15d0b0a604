// Matrix times vector (KernelBench level 1, task 004): out[m, 0] = sum over k of A[m, k] * B[k, 0]
#include "tasks/reference.hpp"
#include "core/parallel_for.hpp"

namespace blaster {

void matvec_reference(const reference_context& io) {
  const std::int64_t rows = io.dim("M");
  const std::int64_t depth = io.dim("K");
  const auto a = io.input("A");
  const auto b = io.input("B");
  const auto out = io.output("out");
  parallel_for(rows, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t m = begin; m < end; ++m) {
      const double* row = a.data() + m * depth;
      double sum = 0.0;
      for (std::int64_t k = 0; k < depth; ++k) sum += row[k] * b[static_cast<std::size_t>(k)];
      out[static_cast<std::size_t>(m)] = sum;
    }
  });
}

}  // namespace blaster
