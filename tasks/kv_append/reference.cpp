// A paged KV cache's append (vLLM's reshape_and_cache_flash): the caches as they were, with each
// new token's keys and values at its slot. Slots are distinct, so the order of the writes does not
// matter.
#include <algorithm>

#include "core/parallel_for.hpp"
#include "tasks/reference.hpp"

namespace blaster {

void kv_append_reference(const reference_context& io) {
  const std::int64_t tokens = io.dim("T");
  const std::int64_t row = io.dim("KH") * io.dim("D");  // one slot's elements
  for (const char* cache : {"k_cache", "v_cache"}) {
    const auto before = io.input(cache);
    std::copy(before.begin(), before.end(), io.output(cache).begin());
  }
  const auto slots = io.input("slot_mapping");
  parallel_for(tokens, [&](std::int64_t begin, std::int64_t end) {
    for (const auto& [from, to] : {std::pair{"key", "k_cache"}, std::pair{"value", "v_cache"}}) {
      const auto source = io.input(from);
      const auto cache = io.output(to);
      for (std::int64_t t = begin; t < end; ++t) {
        const auto slot = static_cast<std::int64_t>(slots[static_cast<std::size_t>(t)]);
        std::copy_n(source.begin() + t * row, row, cache.begin() + slot * row);
      }
    }
  });
}

}  // namespace blaster
