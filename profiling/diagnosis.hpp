#pragma once

// Why a kernel takes the time it takes, from its hardware counters: which limit it is up
// against, how many bytes it really moved against the task's minimum, and what its warps
// waited on. The counters are keyed by the Perfworks metric names that CUPTI's range profiler
// and Nsight Compute both collect, so that every value can be checked with `ncu --metrics`.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace blaster {

namespace counter {
inline constexpr std::string_view dram_bytes_read = "dram__bytes_read.sum";
inline constexpr std::string_view dram_bytes_written = "dram__bytes_write.sum";
inline constexpr std::string_view dram_throughput_pct =
    "dram__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr std::string_view l2_throughput_pct =
    "lts__t_sectors.avg.pct_of_peak_sustained_elapsed";
inline constexpr std::string_view sm_throughput_pct =
    "sm__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr std::string_view tensor_pipe_pct =
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active";
inline constexpr std::string_view achieved_occupancy_pct =
    "sm__warps_active.avg.pct_of_peak_sustained_active";
// A warp stall reason R is the counter stall_prefix + R + stall_suffix: the warps stalled on R
// per issued instruction, as ncu's WarpStateStats section reports it.
inline constexpr std::string_view stall_prefix = "smsp__average_warps_issue_stalled_";
inline constexpr std::string_view stall_suffix = "_per_issue_active.ratio";
}  // namespace counter

enum class bound_by { bandwidth, compute, latency, launch };
std::string_view to_string(bound_by b);  // "bandwidth-bound", ...

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
  // reads up to 2x (less what the L2 still holds of the first read); where the task has no
  // bytes that way (or the counter is missing), none.
  std::optional<double> read_over_minimal;
  std::optional<double> written_over_minimal;
  std::vector<stall_share> top_stalls;  // the two largest, largest first
  std::string line;                     // all of it in one line
};

// A unit at this share of its peak or more is what the kernel is up against; where neither
// memory nor compute gets there, the kernel waits on latency (too few warps, or dependent
// accesses), as Nsight Compute's speed-of-light breakdown reads it.
inline constexpr double busy_unit_pct = 60.0;
// A kernel that takes no more than this many times an empty kernel's launch in the same timing
// mode is held up by the launch, whatever its counters say.
inline constexpr double launch_bound_factor = 2.0;

// The task's roofline bytes for the case, each way.
struct minimal_bytes {
  double read = 0;
  double written = 0;
};

// time_us and launch_floor_us are the variant's measured time and the empty kernel's in the same
// mode (0 where unknown). A counter that is missing counts as 0 towards the bound.
counter_diagnosis diagnose(const std::map<std::string, double>& counters,
                           const minimal_bytes& minimal, double time_us, double launch_floor_us);

}  // namespace blaster
