// Token embedding (torch.nn.functional.embedding): out[t, j] = table[ids[t], j].
#include "core/parallel_for.hpp"
#include "tasks/reference.hpp"

namespace blaster {

void embedding_gather_reference(const reference_context& io) {
  const std::int64_t tokens = io.dim("T");
  const std::int64_t hidden = io.dim("H");
  const auto ids = io.input("ids");
  const auto table = io.input("table");
  const auto out = io.output("out");
  parallel_for(tokens, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t t = begin; t < end; ++t) {
      const auto row = static_cast<std::int64_t>(ids[static_cast<std::size_t>(t)]);
      for (std::int64_t j = 0; j < hidden; ++j) {
        out[static_cast<std::size_t>(t * hidden + j)] =
            table[static_cast<std::size_t>(row * hidden + j)];
      }
    }
  });
}

}  // namespace blaster
