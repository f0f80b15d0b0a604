#pragma once

// How many blocks of a kernel one SM can hold, and which resource stops it from holding more:
// the occupancy calculator's arithmetic, so that a low achieved occupancy names its cause.

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace blaster {

// What one SM has to give (Hopper's numbers by default; the worker reads the device's).
struct sm_resources {
  int max_warps = 64;
  int max_blocks = 32;
  int registers = 65536;
  int partitions = 4;       // each holds registers / partitions for its warps
  int register_unit = 256;  // registers are allocated to a warp in units of this many
  int shared_bytes = 233472;
  int reserved_shared_per_block = 1024;  // the driver keeps this much of each block's share
};

// What one block of the kernel takes.
struct block_footprint {
  int threads = 0;
  int registers_per_thread = 0;  // 0: unknown, no limit from registers
  int shared_bytes = 0;          // static and dynamic
};

struct occupancy_estimate {
  int blocks_per_sm = 0;  // the least of the four limits
  double theoretical_pct = 0;  // of the SM's warps
  std::string limiter;         // "registers", "shared memory", "warps" or "blocks"
  int by_registers = 0;
  int by_shared = 0;
  int by_warps = 0;
  int by_blocks = 0;
  // The driver's own answer (cuOccupancyMaxActiveBlocksPerMultiprocessor), where one was asked.
  std::optional<int> driver_blocks_per_sm;
};

occupancy_estimate estimate_occupancy(const block_footprint& block, const sm_resources& sm);

nlohmann::json to_json(const occupancy_estimate& o);
occupancy_estimate occupancy_estimate_from_json(const nlohmann::json& j);

}  // namespace blaster
