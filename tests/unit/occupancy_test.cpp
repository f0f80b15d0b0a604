#include "profiling/occupancy.hpp"

#include <gtest/gtest.h>

#include "profiling/counter_profile.hpp"
#include "profiling/counters.hpp"

namespace blaster {
namespace {

// Hopper's SM: 64 warps, 32 blocks, 64K registers in 4 partitions, 228 KiB of shared memory.
const sm_resources hopper{};

TEST(Occupancy, RegistersLimitAKernelThatUsesManyOfThem) {
  // 40 registers: 1280 per warp, 12 warps per partition, 48 warps, 12 blocks of 4 warps.
  const occupancy_estimate o =
      estimate_occupancy({.threads = 128, .registers_per_thread = 40, .shared_bytes = 0}, hopper);
  EXPECT_EQ(o.limiter, "registers");
  EXPECT_EQ(o.by_registers, 12);
  EXPECT_EQ(o.by_warps, 16);
  EXPECT_EQ(o.blocks_per_sm, 12);
  EXPECT_DOUBLE_EQ(o.theoretical_pct, 75.0);
}

TEST(Occupancy, RegistersAreAllocatedPerWarpInUnits) {
  // 33 registers round up to 1280 per warp, as 40 do: the same limit.
  EXPECT_EQ(estimate_occupancy({.threads = 128, .registers_per_thread = 33}, hopper).by_registers,
            estimate_occupancy({.threads = 128, .registers_per_thread = 40}, hopper).by_registers);
  // 255 registers: 8192 per warp, two warps per partition, one block of 256 threads.
  const occupancy_estimate o =
      estimate_occupancy({.threads = 256, .registers_per_thread = 255}, hopper);
  EXPECT_EQ(o.blocks_per_sm, 1);
  EXPECT_DOUBLE_EQ(o.theoretical_pct, 12.5);
}

TEST(Occupancy, SharedMemoryCountsTheDriversReservePerBlock) {
  // 100 KiB and the 1 KiB reserve: two blocks fit in 228 KiB.
  const occupancy_estimate o = estimate_occupancy(
      {.threads = 256, .registers_per_thread = 32, .shared_bytes = 100 * 1024}, hopper);
  EXPECT_EQ(o.limiter, "shared memory");
  EXPECT_EQ(o.by_shared, 2);
  EXPECT_DOUBLE_EQ(o.theoretical_pct, 25.0);
}

TEST(Occupancy, SmallBlocksRunOutOfBlockSlots) {
  const occupancy_estimate o =
      estimate_occupancy({.threads = 32, .registers_per_thread = 32}, hopper);
  EXPECT_EQ(o.limiter, "blocks");
  EXPECT_EQ(o.blocks_per_sm, 32);
  EXPECT_DOUBLE_EQ(o.theoretical_pct, 50.0);
}

TEST(Occupancy, FullBlocksOfThreadsAreLimitedByWarps) {
  const occupancy_estimate o =
      estimate_occupancy({.threads = 1024, .registers_per_thread = 16}, hopper);
  EXPECT_EQ(o.limiter, "warps");
  EXPECT_EQ(o.blocks_per_sm, 2);
  EXPECT_DOUBLE_EQ(o.theoretical_pct, 100.0);
}

// A plan's counters: bytes add up over its kernels, rates are weighed by each kernel's time.
TEST(CounterProfile, APlanAddsItsKernelsBytesAndWeighsTheirRatesByTime) {
  counter_profile p;
  p.kernels.push_back({.launch = 0,
                       .kernel = "stats",
                       .counters = {{std::string(counter::duration_ns), 30000},
                                    {std::string(counter::dram_bytes_read), 1e8},
                                    {std::string(counter::dram_throughput_pct), 90}},
                       .occupancy = std::nullopt,
                       .resolution = {},
                       .range = {}});
  p.kernels.push_back({.launch = 1,
                       .kernel = "apply",
                       .counters = {{std::string(counter::duration_ns), 10000},
                                    {std::string(counter::dram_bytes_read), 5e7},
                                    {std::string(counter::dram_throughput_pct), 50}},
                       .occupancy = std::nullopt,
                       .resolution = {},
                       .range = {}});
  const auto plan = plan_counters(p);
  EXPECT_DOUBLE_EQ(plan.at(std::string(counter::duration_ns)), 40000);
  EXPECT_DOUBLE_EQ(plan.at(std::string(counter::dram_bytes_read)), 1.5e8);
  EXPECT_DOUBLE_EQ(plan.at(std::string(counter::dram_throughput_pct)), 80);
}

TEST(CounterProfile, SeveralCountsGiveTheMedianNotFollowingOneFarOff) {
  // Like rmsnorm_vec_regs's no_instruction stalls per issue on an H200 (counts from 0.087 to
  // 0.167): four counts near 0.09, one far off. The mean would be 0.104; the median is 0.0893.
  const std::string stall = "stall";
  const std::string bytes = "dram__bytes_read.sum";
  const std::vector<std::map<std::string, double>> five{{{stall, 0.0870}, {bytes, 4.0}},
                                                        {{stall, 0.167}, {bytes, 4.0}},
                                                        {{stall, 0.0901}, {bytes, 4.0}},
                                                        {{stall, 0.0893}, {bytes, 4.0}},
                                                        {{stall, 0.0884}}};
  const auto median = median_counters(five);
  EXPECT_DOUBLE_EQ(median.at(stall), 0.0893);
  EXPECT_FALSE(median.contains(bytes)) << "a counter one count lacks has no median";
  EXPECT_EQ(counter_ranges(five).at(stall), std::make_pair(0.0870, 0.167));
  // An even number of counts: the mean of the middle two.
  EXPECT_DOUBLE_EQ(
      median_counters({{{stall, 3.0}}, {{stall, 1.0}}, {{stall, 2.0}}, {{stall, 10.0}}}).at(stall),
      2.5);
}

TEST(CounterProfile, EveryStallReasonIsAskedForOnce) {
  const auto& names = profiled_counters();
  for (const auto& reason : stall_reasons()) {
    EXPECT_EQ(std::count(names.begin(), names.end(), stall_counter(reason)), 1) << reason;
  }
  EXPECT_TRUE(is_additive(counter::dram_bytes_read));
  EXPECT_FALSE(is_additive(counter::dram_throughput_pct));
}

}  // namespace
}  // namespace blaster
