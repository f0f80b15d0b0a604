#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace blaster {

// Runs body(begin, end) over [0, count) split into contiguous chunks, one per hardware thread,
// and waits for all of them. The first exception a chunk throws is rethrown here.
void parallel_for(std::int64_t count,
                  const std::function<void(std::int64_t begin, std::int64_t end)>& body);

// Runs work(lane) for every lane at once, each in a thread of its own (one lane: this thread),
// and waits for all of them: one per GPU of a run, say. The first exception is rethrown here.
void on_every_lane(std::size_t lanes, const std::function<void(std::size_t lane)>& work);

// Runs work(item, lane) for items 0 to count - 1 over the lanes, each lane taking the next item
// when it is done with its last, so that a long item holds up one lane only. After a failure no
// lane starts another item; the first exception is rethrown here.
void spread_over_lanes(std::size_t count, std::size_t lanes,
                       const std::function<void(std::size_t item, std::size_t lane)>& work);

}  // namespace blaster
