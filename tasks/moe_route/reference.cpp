// Top-2 mixture-of-experts routing (Mixtral's, as vLLM's fused_topk with renormalize computes it,
// and the grouping that moe_align_block_size prepares, without its padding):
//   experts[t] = the two experts of highest softmax(logits[t]), the higher first; a tie goes to
//                the lower index
//   weights[t] = their probabilities over the two's sum
//   order      = the slots t * 2 + k grouped by expert, experts in order, tokens in order within
//                one; offsets[e] is where expert e's group starts, offsets[E] = 2T
#include <cmath>
#include <vector>

#include "core/parallel_for.hpp"
#include "tasks/reference.hpp"

namespace blaster {

void moe_route_reference(const reference_context& io) {
  const std::int64_t tokens = io.dim("T");
  const std::int64_t experts_count = io.dim("E");
  const auto logits = io.input("logits");
  const auto weights = io.output("weights");
  const auto experts = io.output("experts");
  const auto order = io.output("order");
  const auto offsets = io.output("offsets");
  parallel_for(tokens, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t t = begin; t < end; ++t) {
      const auto row = static_cast<std::size_t>(t * experts_count);
      // The softmax is monotonic: the top two by logit are the top two by probability.
      std::int64_t first = 0;
      for (std::int64_t e = 1; e < experts_count; ++e) {
        if (logits[row + static_cast<std::size_t>(e)] >
            logits[row + static_cast<std::size_t>(first)]) {
          first = e;
        }
      }
      std::int64_t second = first == 0 ? 1 : 0;
      for (std::int64_t e = 0; e < experts_count; ++e) {
        if (e != first && logits[row + static_cast<std::size_t>(e)] >
                              logits[row + static_cast<std::size_t>(second)]) {
          second = e;
        }
      }
      // p_second / p_first = exp(l_second - l_first): the softmax's denominator cancels.
      const double ratio = std::exp(logits[row + static_cast<std::size_t>(second)] -
                                    logits[row + static_cast<std::size_t>(first)]);
      const auto slot = static_cast<std::size_t>(2 * t);
      weights[slot] = 1.0 / (1.0 + ratio);
      weights[slot + 1] = ratio / (1.0 + ratio);
      experts[slot] = static_cast<double>(first);
      experts[slot + 1] = static_cast<double>(second);
    }
  });
  std::vector<std::int64_t> next(static_cast<std::size_t>(experts_count) + 1, 0);
  for (std::int64_t s = 0; s < 2 * tokens; ++s) {
    ++next[static_cast<std::size_t>(experts[static_cast<std::size_t>(s)]) + 1];
  }
  for (std::size_t e = 1; e < next.size(); ++e) next[e] += next[e - 1];
  for (std::size_t e = 0; e < next.size(); ++e) offsets[e] = static_cast<double>(next[e]);
  for (std::int64_t s = 0; s < 2 * tokens; ++s) {
    const auto e = static_cast<std::size_t>(experts[static_cast<std::size_t>(s)]);
    order[static_cast<std::size_t>(next[e]++)] = static_cast<double>(s);
  }
}

}  // namespace blaster
