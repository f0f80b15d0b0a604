// Matrix product with a small inner dimension (KernelBench level 1, task 007):
//   out[m, n] = sum over k of A[m, k] * B[k, n]
#include <algorithm>
#include <vector>

#include "core/parallel_for.hpp"
#include "tasks/reference.hpp"

namespace blaster {

void matmul_smallk_reference(const reference_context& io) {
  const std::int64_t rows = io.dim("M");
  const std::int64_t columns = io.dim("N");
  const std::int64_t depth = io.dim("K");
  const auto a = io.input("A");
  const auto b = io.input("B");
  const auto out = io.output("out");
  // A strip of output columns keeps its accumulators in L1 and the K rows of B it reads in L2
  // while a thread walks its rows; each row adds K scaled rows of B, in order of k.
  constexpr std::int64_t strip = 512;
  parallel_for(rows, [&](std::int64_t begin, std::int64_t end) {
    std::vector<double> sum(strip);
    for (std::int64_t n0 = 0; n0 < columns; n0 += strip) {
      const std::int64_t width = std::min(strip, columns - n0);
      for (std::int64_t m = begin; m < end; ++m) {
        std::fill_n(sum.begin(), width, 0.0);
        for (std::int64_t k = 0; k < depth; ++k) {
          const double scale = a[static_cast<std::size_t>(m * depth + k)];
          const double* from = b.data() + k * columns + n0;
          for (std::int64_t j = 0; j < width; ++j)
            sum[static_cast<std::size_t>(j)] += scale * from[j];
        }
        std::copy_n(sum.begin(), width, out.begin() + m * columns + n0);
      }
    }
  });
}

}  // namespace blaster
