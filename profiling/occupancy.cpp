#include "profiling/occupancy.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace blaster {
namespace {

int round_up(int value, int unit) { return unit <= 0 ? value : (value + unit - 1) / unit * unit; }

}  // namespace

occupancy_estimate estimate_occupancy(const block_footprint& block, const sm_resources& sm) {
  occupancy_estimate o;
  const int warps = std::max(1, (block.threads + 31) / 32);
  o.by_warps = sm.max_warps / warps;
  o.by_blocks = sm.max_blocks;
  o.by_registers = o.by_blocks;
  if (block.registers_per_thread > 0) {
    // Each partition schedules whole warps out of its own share of the register file.
    const int per_warp = round_up(block.registers_per_thread * 32, sm.register_unit);
    const int warps_per_partition = sm.registers / sm.partitions / per_warp;
    o.by_registers = warps_per_partition * sm.partitions / warps;
  }
  const int shared = block.shared_bytes + sm.reserved_shared_per_block;
  o.by_shared = shared > 0 ? sm.shared_bytes / shared : o.by_blocks;
  // In this order a tie names the resource a kernel author can change most easily.
  const std::array<std::pair<const char*, int>, 4> limits{{{"registers", o.by_registers},
                                                           {"shared memory", o.by_shared},
                                                           {"warps", o.by_warps},
                                                           {"blocks", o.by_blocks}}};
  const auto least = std::min_element(limits.begin(), limits.end(), [](const auto& a, const auto& b) {
    return a.second < b.second;
  });
  o.blocks_per_sm = std::max(0, least->second);
  o.limiter = least->first;
  o.theoretical_pct = 100.0 * o.blocks_per_sm * warps / sm.max_warps;
  return o;
}

nlohmann::json to_json(const occupancy_estimate& o) {
  nlohmann::json j{{"blocks_per_sm", o.blocks_per_sm},  {"theoretical_pct", o.theoretical_pct},
                   {"limiter", o.limiter},              {"by_registers", o.by_registers},
                   {"by_shared", o.by_shared},          {"by_warps", o.by_warps},
                   {"by_blocks", o.by_blocks}};
  if (o.driver_blocks_per_sm) j["driver_blocks_per_sm"] = *o.driver_blocks_per_sm;
  return j;
}

occupancy_estimate occupancy_estimate_from_json(const nlohmann::json& j) {
  occupancy_estimate o{.blocks_per_sm = j.at("blocks_per_sm").get<int>(),
                       .theoretical_pct = j.at("theoretical_pct").get<double>(),
                       .limiter = j.at("limiter").get<std::string>(),
                       .by_registers = j.at("by_registers").get<int>(),
                       .by_shared = j.at("by_shared").get<int>(),
                       .by_warps = j.at("by_warps").get<int>(),
                       .by_blocks = j.at("by_blocks").get<int>(),
                       .driver_blocks_per_sm = std::nullopt};
  if (j.contains("driver_blocks_per_sm")) o.driver_blocks_per_sm = j["driver_blocks_per_sm"].get<int>();
  return o;
}

}  // namespace blaster
