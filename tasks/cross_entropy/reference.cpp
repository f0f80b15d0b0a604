// Cross-entropy loss of logits[N, C] against class indices targets[N] (KernelBench level 1,
// task 095, torch.nn.functional.cross_entropy with its default mean reduction):
//   loss = mean over i of -log_softmax(logits[i, :])[targets[i]]
//        = mean over i of (m_i + log(sum over j of exp(logits[i, j] - m_i)) - logits[i, t_i])
// with m_i the row max, which keeps exp in range.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "core/parallel_for.hpp"
#include "tasks/reference.hpp"

namespace blaster {

void cross_entropy_reference(const reference_context& io) {
  const std::int64_t rows = io.dim("N");
  const std::int64_t classes = io.dim("C");
  const auto logits = io.input("logits");
  const auto targets = io.input("targets");
  const auto loss = io.output("loss");
  if (rows == 0 || classes == 0) {
    loss[0] = std::nan("");  // the mean of nothing, as PyTorch answers
    return;
  }
  std::vector<double> per_row(static_cast<std::size_t>(rows));
  parallel_for(rows, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      const double t = targets[static_cast<std::size_t>(i)];
      // A target out of range would send a kernel out of bounds; it is the task's error.
      if (!(t >= 0 && t < static_cast<double>(classes))) {
        BLASTER_INPUT_ERROR("cross_entropy: targets[{}] = {} is not a class in [0, {})", i, t,
                            classes);
      }
      const auto row =
          logits.subspan(static_cast<std::size_t>(i * classes), static_cast<std::size_t>(classes));
      const double m = *std::max_element(row.begin(), row.end());
      double sum = 0.0;
      for (double v : row) sum += std::exp(v - m);
      per_row[static_cast<std::size_t>(i)] = m + std::log(sum) - row[static_cast<std::size_t>(t)];
    }
  });
  double total = 0.0;
  for (double v : per_row) total += v;
  loss[0] = total / static_cast<double>(rows);
}

}  // namespace blaster
