#pragma once

// The hardware counters blaster collects for every kernel of a plan, keyed by the Perfworks
// metric names that CUPTI's range profiler and Nsight Compute both know, so that every value can
// be checked with `ncu --metrics NAME`.

#include <string>
#include <string_view>
#include <vector>

namespace blaster {

namespace counter {
inline constexpr std::string_view duration_ns = "gpu__time_duration.sum";
inline constexpr std::string_view dram_bytes_read = "dram__bytes_read.sum";
inline constexpr std::string_view dram_bytes_written = "dram__bytes_write.sum";
inline constexpr std::string_view dram_throughput_pct =
    "dram__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr std::string_view l2_throughput_pct =
    "lts__t_sectors.avg.pct_of_peak_sustained_elapsed";
inline constexpr std::string_view l2_hit_pct = "lts__t_sector_hit_rate.pct";
inline constexpr std::string_view l1_hit_pct = "l1tex__t_sector_hit_rate.pct";
inline constexpr std::string_view sm_throughput_pct =
    "sm__throughput.avg.pct_of_peak_sustained_elapsed";
// Every kind of tensor instruction: mma.sync's hmma and imma, and Hopper's wgmma (gmma), which
// the hmma-only counter misses; Blackwell has no hmma-only counter at all.
inline constexpr std::string_view tensor_pipe_pct =
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active";
// What runs recorded before counted as the tensor pipe: mma.sync's hmma alone.
inline constexpr std::string_view tensor_pipe_hmma_pct =
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active";
inline constexpr std::string_view achieved_occupancy_pct =
    "sm__warps_active.avg.pct_of_peak_sustained_active";
inline constexpr std::string_view instructions = "smsp__inst_executed.sum";
// The clocks the kernel ran at: counts of stall cycles per instruction depend on the SM clock
// against the memory's, and the card's clocks are measured as found, never locked.
inline constexpr std::string_view sm_frequency_hz = "smsp__cycles_elapsed.avg.per_second";
inline constexpr std::string_view dram_frequency_hz = "dram__cycles_elapsed.avg.per_second";
// A warp stall reason R is the counter stall_prefix + R + stall_suffix: the warps stalled on R
// per issued instruction, as ncu's WarpStateStats section reports it.
inline constexpr std::string_view stall_prefix = "smsp__average_warps_issue_stalled_";
inline constexpr std::string_view stall_suffix = "_per_issue_active.ratio";
// Not a counter of the kernel: the DRAM writes of the L2 sweep that follows it, i.e. the dirty
// lines the kernel left in the L2, which reach DRAM only after it ends.
inline constexpr std::string_view dram_bytes_written_back = "blaster__dram_bytes_written_back.sum";
}  // namespace counter

// The stall reasons of ncu's WarpStateStats section, of every chip: a chip without one (gmma,
// waiting on a wgmma, is Hopper's alone) lists its counter as missing.
const std::vector<std::string>& stall_reasons();
std::string stall_counter(std::string_view reason);

// Every counter a profile asks CUPTI for, in a fixed order.
const std::vector<std::string>& profiled_counters();

// The counters that add up over the kernels of a plan (bytes, instructions, time); the others
// are rates or shares, which a plan weighs by each kernel's time.
bool is_additive(std::string_view name);

}  // namespace blaster
