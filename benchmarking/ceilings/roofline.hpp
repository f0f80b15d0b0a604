#pragma once

// ceilings/: what the device reaches with blaster's own kernels (memory_ceilings,
// matrix_rate, launch_floor), and the least time a case's bytes take at those ceilings (roofline).

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "benchmarking/ceilings/memory_ceilings.hpp"

namespace blaster {

// The bytes a timed case must move and where they can come from between launches.
struct roofline_traffic {
  std::int64_t read_bytes = 0;     // the fewest bytes any correct kernel must read
  std::int64_t written_bytes = 0;  // and write
  bool mix_known = true;           // false: the task states only the sum (judged as reads)
  std::int64_t footprint_bytes =
      0;  // [bytes] every buffer of one plan run: inputs, outputs, scratch
  std::int64_t l2_bytes = 0;
  // Hot and graph mode may find data in the L2 that earlier launches left; cold mode (flushed)
  // cannot.
  bool l2_may_hold = true;
  int buffer_copies = 1;  // the buffer sets the launches rotate over
};

// The least time a case's bytes take at the ceilings of where they live. A launch touches at
// least its minimal bytes of one buffer set; a gather touches no more, however large the table
// it gathers from. Over the sets a sample rotates through, those bytes span DRAM when they reach
// twice the L2 (as the rotation is sized to) or cannot stay there, the L2 when they fit, and in
// between as much as the L2 holds comes from the L2 and the rest from DRAM.
struct roofline_floor {
  std::string level;                      // "dram", "l2" or "l2+dram"
  std::int64_t bytes = 0;                 // [bytes] read + written
  std::int64_t l2_resident_bytes = 0;     // [bytes] of them that may come from the L2
  double ceiling_bytes_per_second = 0.0;  // bytes over floor_us
  double floor_us = 0.0;                  // [microseconds]
  double uncertainty = 0.0;               // relative: the spread of the ceilings used
};

nlohmann::json to_json(const roofline_floor& f);
roofline_floor roofline_floor_from_json(const nlohmann::json& j);

roofline_floor memory_floor(const memory_ceilings& ceilings, const roofline_traffic& traffic);

// A time below the floor by more than the floor's own uncertainty and the measurement's
// (`noise`, relative) is not a kernel doing the work: the evidence in one line (bytes, time,
// ceiling, level), or nothing when the time is possible. A DRAM rate above the memory's hard
// bound is impossible whatever the margin.
std::optional<std::string> impossible_speed(const roofline_floor& floor,
                                            const memory_ceilings& ceilings, double time_us,
                                            double noise);

}  // namespace blaster
