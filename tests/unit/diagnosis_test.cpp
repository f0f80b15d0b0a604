#include "profiling/diagnosis.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace blaster {
namespace {

std::string stall(const char* reason) {
  return std::string(counter::stall_prefix) + reason + std::string(counter::stall_suffix);
}

// rmsnorm's canonical case: 128 MiB read, 128 MiB written.
const minimal_bytes rmsnorm{.read = 134217728, .written = 134217728};

std::map<std::string, double> streaming(double read_bytes) {
  return {{std::string(counter::dram_bytes_read), read_bytes},
          {std::string(counter::dram_bytes_written), 134217728},
          {std::string(counter::dram_throughput_pct), 91.2},
          {std::string(counter::l2_throughput_pct), 44.0},
          {std::string(counter::sm_throughput_pct), 21.5},
          {std::string(counter::achieved_occupancy_pct), 88.0},
          {stall("long_scoreboard"), 6.0},
          {stall("wait"), 1.0},
          {stall("lg_throttle"), 2.0},
          {stall("not_selected"), 0.0}};
}

TEST(Diagnosis, AStreamingKernelIsBandwidthBoundAndMovesTheMinimalBytes) {
  const counter_diagnosis d = diagnose(streaming(134217728), rmsnorm, 70.3, 4.5);
  EXPECT_EQ(d.bound, bound_by::bandwidth);
  EXPECT_DOUBLE_EQ(d.memory_pct, 91.2);
  ASSERT_TRUE(d.read_over_minimal && d.written_over_minimal);
  EXPECT_DOUBLE_EQ(*d.read_over_minimal, 1.0);
  EXPECT_DOUBLE_EQ(*d.written_over_minimal, 1.0);
  ASSERT_EQ(d.top_stalls.size(), 2U);
  EXPECT_EQ(d.top_stalls[0].reason, "long_scoreboard");
  EXPECT_DOUBLE_EQ(d.top_stalls[0].share, 6.0 / 9.0);
  EXPECT_EQ(d.top_stalls[1].reason, "lg_throttle");
  EXPECT_EQ(d.line,
            "bandwidth-bound (DRAM at 91% of peak); DRAM reads 1.00x, writes 1.00x the minimal "
            "bytes; stalls: long_scoreboard 67% lg_throttle 22%");
}

TEST(Diagnosis, AKernelThatReadsItsInputTwiceShowsTwiceTheMinimalReads) {
  const counter_diagnosis d = diagnose(streaming(2.0 * 134217728), rmsnorm, 113.9, 4.5);
  ASSERT_TRUE(d.read_over_minimal);
  EXPECT_DOUBLE_EQ(*d.read_over_minimal, 2.0);
  EXPECT_NE(d.line.find("DRAM reads 2.00x, writes 1.00x"), std::string::npos) << d.line;
}

// Recorded by Nsight Compute 2025.3.1 (--clock-control none, --metrics with these names) on the
// H200, 2026-12-02: rmsnorm's canonical case (B=16 C=64 H=256 W=256, f16), VEC=4, BLOCK=128.
// CMAX=64 holds every channel in registers; CMAX=32 re-reads x, and the L2 (60 MB) catches part
// of the second read. DRAM writes fall short of the minimum because the L2 still holds part of
// the output when the kernel ends.
std::map<std::string, double> recorded(bool reads_twice) {
  std::map<std::string, double> c = {
      {std::string(counter::dram_bytes_read), reads_twice ? 241641984.0 : 134308864.0},
      {std::string(counter::dram_bytes_written), reads_twice ? 113568000.0 : 108381696.0},
      {std::string(counter::dram_throughput_pct), reads_twice ? 67.27 : 74.74},
      {std::string(counter::l2_throughput_pct), reads_twice ? 34.55 : 39.54},
      {std::string(counter::sm_throughput_pct), reads_twice ? 16.37 : 31.09},
      {std::string(counter::tensor_pipe_pct), reads_twice ? 0.08 : 0.13},
      {std::string(counter::achieved_occupancy_pct), reads_twice ? 28.12 : 17.11},
      {stall("long_scoreboard"), reads_twice ? 23.13 : 1.93},
      {stall("wait"), reads_twice ? 0.93 : 1.50},
      {stall("lg_throttle"), reads_twice ? 0.00 : 1.16},
      {stall("not_selected"), reads_twice ? 0.17 : 0.28},
      {stall("no_instruction"), reads_twice ? 0.11 : 0.12},
      {stall("dispatch_stall"), reads_twice ? 0.02 : 0.14},
      {stall("selected"), 1.0}};
  return c;
}

TEST(Diagnosis, RecordedCountersOfRmsnormOnTheH200) {
  const counter_diagnosis once = diagnose(recorded(false), rmsnorm, 67.52, 4.5);
  EXPECT_EQ(once.bound, bound_by::bandwidth);
  ASSERT_TRUE(once.read_over_minimal);
  EXPECT_NEAR(*once.read_over_minimal, 1.0, 0.01);  // x read once
  ASSERT_EQ(once.top_stalls.size(), 2U);
  EXPECT_EQ(once.top_stalls[0].reason, "long_scoreboard");
  EXPECT_EQ(once.top_stalls[1].reason, "wait");  // "selected" is issuing, not a stall
  EXPECT_EQ(once.line.rfind("bandwidth-bound (DRAM at 75% of peak); DRAM reads 1.00x, writes "
                            "0.81x the minimal bytes; stalls: long_scoreboard",
                            0),
            0U)
      << once.line;

  const counter_diagnosis twice = diagnose(recorded(true), rmsnorm, 109.79, 4.5);
  EXPECT_EQ(twice.bound, bound_by::bandwidth);
  ASSERT_TRUE(twice.read_over_minimal);
  EXPECT_GT(*twice.read_over_minimal, 1.7);  // the second read, less what the L2 held
  EXPECT_EQ(twice.top_stalls[0].reason, "long_scoreboard");
  EXPECT_GT(twice.top_stalls[0].share, 0.9);
}

TEST(Diagnosis, NeitherUnitBusyIsLatencyBoundWithItsOccupancy) {
  // One block per SM: little in flight, every unit mostly idle.
  const std::map<std::string, double> one_block_per_sm = {
      {std::string(counter::dram_throughput_pct), 9.0},
      {std::string(counter::l2_throughput_pct), 12.0},
      {std::string(counter::sm_throughput_pct), 6.0},
      {std::string(counter::achieved_occupancy_pct), 6.2},
      {stall("long_scoreboard"), 20.0}};
  const counter_diagnosis d = diagnose(one_block_per_sm, rmsnorm, 900.0, 4.5);
  EXPECT_EQ(d.bound, bound_by::latency);
  EXPECT_EQ(d.line.rfind("latency-bound (memory 12%, compute 6% of peak, occupancy 6%)", 0), 0U)
      << d.line;
}

TEST(Diagnosis, ABusyTensorPipeIsComputeBound) {
  const std::map<std::string, double> mma = {{std::string(counter::dram_throughput_pct), 35.0},
                                             {std::string(counter::sm_throughput_pct), 48.0},
                                             {std::string(counter::tensor_pipe_pct), 83.0}};
  const counter_diagnosis d = diagnose(mma, {}, 250.0, 4.5);
  EXPECT_EQ(d.bound, bound_by::compute);
  EXPECT_DOUBLE_EQ(d.compute_pct, 83.0);
  EXPECT_FALSE(d.read_over_minimal);  // the task states no bytes
  EXPECT_EQ(d.line, "compute-bound (SM at 83% of peak)");
}

TEST(Diagnosis, ATimeNearAnEmptyKernelsIsLaunchBoundWhateverTheCounters) {
  const counter_diagnosis d = diagnose(streaming(134217728), rmsnorm, 5.0, 3.6);
  EXPECT_EQ(d.bound, bound_by::launch);
  EXPECT_EQ(d.line.rfind("launch-bound (1.39x an empty kernel's time)", 0), 0U) << d.line;
  // Just past the factor, the counters decide.
  EXPECT_EQ(diagnose(streaming(134217728), rmsnorm, 5.5, 3.6).bound, bound_by::bandwidth);
}

TEST(Diagnosis, MissingCountersSayNothingTheyDoNotKnow) {
  const counter_diagnosis d = diagnose({}, rmsnorm, 100.0, 0.0);
  EXPECT_EQ(d.bound, bound_by::latency);
  EXPECT_FALSE(d.read_over_minimal);
  EXPECT_FALSE(d.written_over_minimal);
  EXPECT_TRUE(d.top_stalls.empty());
  EXPECT_EQ(d.line, "latency-bound (memory 0%, compute 0% of peak)");
}

}  // namespace
}  // namespace blaster
