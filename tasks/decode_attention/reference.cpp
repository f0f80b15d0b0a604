// Decode attention over a paged KV cache with grouped-query heads (vLLM's layout): for sequence b
// and query head h, with g = h / (QH / KH) its KV head and key t at
// k_cache[block_table[b, t / BS], t % BS, g, :],
//   out[b, h, :] = sum over t < seq_lens[b] of softmax_t(scale * q[b, h, :] . k_t) v_t,
// and zeros for a sequence of length 0.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/parallel_for.hpp"
#include "tasks/reference.hpp"

namespace blaster {

void decode_attention_reference(const reference_context& io) {
  const std::int64_t batch = io.dim("B");
  const std::int64_t q_heads = io.dim("QH");
  const std::int64_t kv_heads = io.dim("KH");
  const std::int64_t dim = io.dim("D");
  const std::int64_t block_size = io.dim("BS");
  const std::int64_t max_blocks = io.dim("MAXB");
  // The kernels receive scale as an f32: the reference uses that same value.
  const double scale = static_cast<float>(io.value("scale"));
  const auto q = io.input("q");
  const auto k_cache = io.input("k_cache");
  const auto v_cache = io.input("v_cache");
  const auto block_table = io.input("block_table");
  const auto seq_lens = io.input("seq_lens");
  const auto out = io.output("out");
  const std::int64_t group = q_heads / kv_heads;
  parallel_for(batch * q_heads, [&](std::int64_t begin, std::int64_t end) {
    std::vector<double> scores;
    std::vector<double> sum(static_cast<std::size_t>(dim));
    for (std::int64_t bh = begin; bh < end; ++bh) {
      const std::int64_t b = bh / q_heads;
      const std::int64_t kv_head = bh % q_heads / group;
      const std::int64_t length = static_cast<std::int64_t>(seq_lens[static_cast<std::size_t>(b)]);
      const auto query =
          q.subspan(static_cast<std::size_t>(bh * dim), static_cast<std::size_t>(dim));
      // The element offset of token t's row for this KV head in either cache.
      auto row = [&](std::int64_t t) {
        const auto block = static_cast<std::int64_t>(
            block_table[static_cast<std::size_t>(b * max_blocks + t / block_size)]);
        return static_cast<std::size_t>(
            ((block * block_size + t % block_size) * kv_heads + kv_head) * dim);
      };
      scores.assign(static_cast<std::size_t>(length), 0.0);
      double top = -INFINITY;
      for (std::int64_t t = 0; t < length; ++t) {
        const std::size_t key = row(t);
        double dot = 0.0;
        for (std::int64_t d = 0; d < dim; ++d) {
          dot += query[static_cast<std::size_t>(d)] * k_cache[key + static_cast<std::size_t>(d)];
        }
        scores[static_cast<std::size_t>(t)] = scale * dot;
        top = std::max(top, scale * dot);
      }
      std::fill(sum.begin(), sum.end(), 0.0);
      double total = 0.0;
      for (std::int64_t t = 0; t < length; ++t) {
        const double weight = std::exp(scores[static_cast<std::size_t>(t)] - top);
        total += weight;
        const std::size_t value = row(t);
        for (std::int64_t d = 0; d < dim; ++d) {
          sum[static_cast<std::size_t>(d)] += weight * v_cache[value + static_cast<std::size_t>(d)];
        }
      }
      for (std::int64_t d = 0; d < dim; ++d) {
        out[static_cast<std::size_t>(bh * dim + d)] =
            length > 0 ? sum[static_cast<std::size_t>(d)] / total : 0.0;
      }
    }
  });
}

}  // namespace blaster
