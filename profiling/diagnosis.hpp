#pragma once

// Why a kernel takes the time it takes, from its hardware counters: which limit it is up
// against, how many bytes it really moved against the task's minimum, and what its warps
// waited on, from the counters of profiling/counters.hpp.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/timing_mode.hpp"
#include "profiling/counters.hpp"

namespace blaster {


enum class bound_by { bandwidth, compute, latency, launch };
std::string_view to_string(bound_by b);  // "bandwidth-bound", ...
std::optional<bound_by> bound_from_string(std::string_view text);

struct stall_share {
  std::string reason;  // "long_scoreboard"
  double share = 0;    // of all stalls, 0 to 1
};

// What the profile of one variant says.
struct counter_diagnosis {
  bound_by bound = bound_by::latency;
  double memory_pct = 0;   // the busier of DRAM and L2 [% of peak]
  double compute_pct = 0;  // the busier of the SM and its tensor pipe [% of peak]
  // DRAM bytes over the task's minimal bytes, each way: a kernel that reads its input twice
  // reads up to 2x (less what the L2 still holds of the first read). Writes count the dirty
  // lines the kernel left in the L2 (counter::dram_bytes_written_back) where the profile has
  // them. Where the task has no bytes that way (or the counter is missing), none.
  std::optional<double> read_over_minimal;
  std::optional<double> written_over_minimal;
  std::vector<stall_share> top_stalls;  // the two largest, largest first
  std::string line;                     // all of it in one line
};

// A unit at this share of its peak or more is what the kernel is up against; where neither
// memory nor compute gets there, the kernel waits on latency (too few warps, or dependent
// accesses), as Nsight Compute's speed-of-light breakdown reads it.
inline constexpr double busy_unit_pct = 60.0;

// Fewer minimal bytes than this are not held against DRAM's counts, which move whole sectors
// and include the profiler's own records: a loss's single output value would read as 1000x.
inline constexpr double least_compared_bytes = 1 << 20;

// The task's roofline bytes for the case, each way.
struct minimal_bytes {
  double read = 0;
  double written = 0;
};

// time_us and launch_floor_us are the variant's measured time and the empty kernel's in the same
// mode (0 where unknown). A counter that is missing counts as 0 towards the bound.
counter_diagnosis diagnose(const std::map<std::string, double>& counters,
                           const minimal_bytes& minimal, double time_us, double launch_floor_us);

nlohmann::json to_json(const counter_diagnosis& d);
counter_diagnosis counter_diagnosis_from_json(const nlohmann::json& j);

}  // namespace blaster
