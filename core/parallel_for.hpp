#pragma once

#include <cstdint>
#include <functional>

namespace blaster {

// Runs body(begin, end) over [0, count) split into contiguous chunks, one per hardware thread,
// and waits for all of them. The first exception a chunk throws is rethrown here.
void parallel_for(std::int64_t count,
                  const std::function<void(std::int64_t begin, std::int64_t end)>& body);

}  // namespace blaster
