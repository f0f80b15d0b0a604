// Top-k of each row of logits[T, V] (torch.topk with sorted=True, with its ties made definite):
// values[t] the k largest, highest first, ids[t] their positions; equal values go in id order.
#include <algorithm>
#include <numeric>
#include <vector>

#include "core/parallel_for.hpp"
#include "tasks/reference.hpp"

namespace blaster {

void logits_topk_reference(const reference_context& io) {
  const std::int64_t rows = io.dim("T");
  const std::int64_t vocabulary = io.dim("V");
  const std::int64_t k = io.dim("K");
  const auto logits = io.input("logits");
  const auto values = io.output("values");
  const auto ids = io.output("ids");
  parallel_for(rows, [&](std::int64_t begin, std::int64_t end) {
    std::vector<std::int64_t> order(static_cast<std::size_t>(vocabulary));
    for (std::int64_t t = begin; t < end; ++t) {
      const auto row = logits.subspan(static_cast<std::size_t>(t * vocabulary),
                                      static_cast<std::size_t>(vocabulary));
      std::iota(order.begin(), order.end(), 0);
      std::partial_sort(order.begin(), order.begin() + k, order.end(),
                        [&](std::int64_t a, std::int64_t b) {
                          const double va = row[static_cast<std::size_t>(a)];
                          const double vb = row[static_cast<std::size_t>(b)];
                          return va > vb || (va == vb && a < b);
                        });
      for (std::int64_t j = 0; j < k; ++j) {
        const auto out = static_cast<std::size_t>(t * k + j);
        const std::int64_t id = order[static_cast<std::size_t>(j)];
        values[out] = row[static_cast<std::size_t>(id)];
        ids[out] = static_cast<double>(id);
      }
    }
  });
}

}  // namespace blaster
