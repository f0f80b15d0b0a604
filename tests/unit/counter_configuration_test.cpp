// CUPTI's Profiler Host API knows every chip's metrics without a GPU: every counter a profile asks
// for is checked here against the chips blaster profiles, with the configuration CUPTI builds.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "profiling/counters.hpp"
#include "profiling/range_profiler.hpp"

namespace blaster {
namespace {

TEST(CounterConfiguration, HopperHasEveryCounterAProfileAsksFor) {
  // GH100: the H100 and the H200.
  const counter_configuration hopper("GH100", {}, profiled_counters());
  EXPECT_EQ(hopper.missing(), std::vector<std::string>{});
  EXPECT_EQ(hopper.metrics(), profiled_counters());
  EXPECT_FALSE(hopper.image().empty());
  EXPECT_GT(hopper.passes(), 1);
}

TEST(CounterConfiguration, OtherChipsLackTheseCountersAndNoOthers) {
  // Every chip has the tensor pipe's counter (Blackwell has no hmma-only one). The gmma stall,
  // waiting on a wgmma, is Hopper's alone; Blackwell has no imc_miss stall, and GB202's GDDR7
  // names its bytes dram__bytes_op_read and _op_write.
  const std::string read(counter::dram_bytes_read), written(counter::dram_bytes_written);
  const std::vector<std::pair<std::string, std::vector<std::string>>> chips{
      {"GA100", {stall_counter("gmma")}},
      {"AD102", {stall_counter("gmma")}},
      {"GB100", {stall_counter("gmma"), stall_counter("imc_miss")}},
      {"GB202", {read, written, stall_counter("gmma"), stall_counter("imc_miss")}}};
  for (const auto& [chip, missing] : chips) {
    const counter_configuration c(chip, {}, profiled_counters());
    EXPECT_EQ(c.missing(), missing) << chip;
    EXPECT_EQ(c.metrics().size() + missing.size(), profiled_counters().size()) << chip;
  }
}

TEST(CounterConfiguration, ACounterTheChipLacksIsMissingAndTheRestIsCounted) {
  const counter_configuration c("GH100", {},
                                {"blaster__no_such.sum", std::string(counter::dram_bytes_read)});
  EXPECT_EQ(c.metrics(), std::vector<std::string>{std::string(counter::dram_bytes_read)});
  EXPECT_EQ(c.missing(), std::vector<std::string>{"blaster__no_such.sum"});
  EXPECT_GE(c.passes(), 1);
  EXPECT_THROW(counter_configuration("GH100", {}, {"blaster__no_such.sum"}), counters_unavailable);
}

}  // namespace
}  // namespace blaster
