// The roofline's floors and the checks built on them, with ceilings of known value: what makes a
// time possible, and what makes a launch's work depend on its outputs.
#include "benchmarking/ceilings/roofline.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "benchmarking/timing/output_dependence.hpp"

namespace blaster {
namespace {

constexpr std::int64_t MB = 1000 * 1000;
constexpr std::int64_t l2 = 60 * MB;

bandwidth_ceiling at(double bytes_per_second, double spread = 0.01) {
  return {.bytes_per_second = bytes_per_second,
          .bytes_moved = 0,
          .time_us = 0.0,
          .config = "test",
          .spread = spread};
}

// An H200-like device: reads alone faster than a copy, writes alone slower, the L2 far faster.
const memory_ceilings ceilings{.copy = at(4.0e12),
                               .read = at(4.4e12, 0.03),
                               .write = at(3.6e12),
                               .l2 = at(10.0e12, 0.02),
                               .peak_bytes_per_second = 4.8e12};

roofline_traffic traffic(std::int64_t read, std::int64_t written, bool l2_may_hold = true,
                         int buffer_copies = 1) {
  return {.read_bytes = read,
          .written_bytes = written,
          .mix_known = true,
          .footprint_bytes = read + written,
          .l2_bytes = l2,
          .l2_may_hold = l2_may_hold,
          .buffer_copies = buffer_copies};
}

TEST(MemoryCeilings, EachMixHasTheCeilingBetweenItsNeighbours) {
  EXPECT_DOUBLE_EQ(ceilings.dram_for(0, 100), 3.6e12);    // writes only
  EXPECT_DOUBLE_EQ(ceilings.dram_for(100, 100), 4.0e12);  // a copy
  EXPECT_DOUBLE_EQ(ceilings.dram_for(100, 0), 4.4e12);    // reads only
  EXPECT_DOUBLE_EQ(ceilings.dram_for(300, 100), 4.2e12);  // three quarters read
  EXPECT_DOUBLE_EQ(ceilings.dram_for(100, 300), 3.8e12);
  // Interpolating between copy and read takes the larger spread of the two.
  EXPECT_DOUBLE_EQ(ceilings.dram_spread_for(300, 100), 0.03);
  EXPECT_DOUBLE_EQ(ceilings.dram_spread_for(100, 100), 0.01);
  // The bound is the peak, unless a measured ceiling exceeds it (then the peak is wrong).
  EXPECT_DOUBLE_EQ(ceilings.dram_bound(), 4.8e12);
  memory_ceilings odd = ceilings;
  odd.peak_bytes_per_second = 4.2e12;
  EXPECT_DOUBLE_EQ(odd.dram_bound(), 4.4e12);
}

TEST(RooflineFloor, DataBeyondTwiceTheL2IsJudgedAgainstDram) {
  const roofline_floor f = memory_floor(ceilings, traffic(134 * MB, 134 * MB));
  EXPECT_EQ(f.level, "dram");
  EXPECT_EQ(f.l2_resident_bytes, 0);
  EXPECT_DOUBLE_EQ(f.ceiling_bytes_per_second, 4.0e12);
  EXPECT_NEAR(f.floor_us, 268.0 * MB / 4.0e12 * 1e6, 1e-9);
  // A mostly-read task (a matrix-vector product) gets the faster ceiling of its own mix.
  const roofline_floor reads = memory_floor(ceilings, traffic(4290 * MB, 1 * MB));
  EXPECT_GT(reads.ceiling_bytes_per_second, 4.39e12);
}

TEST(RooflineFloor, DataInTheL2IsJudgedAgainstTheL2UnlessFlushedOrRotated) {
  const roofline_floor warm = memory_floor(ceilings, traffic(8 * MB, 8 * MB));
  EXPECT_EQ(warm.level, "l2");
  EXPECT_EQ(warm.l2_resident_bytes, 16 * MB);
  EXPECT_DOUBLE_EQ(warm.ceiling_bytes_per_second, 10.0e12);
  EXPECT_DOUBLE_EQ(warm.uncertainty, 0.02);
  // Flushed, the reads come from DRAM; the writes may stay in the empty L2 until it ends.
  const roofline_floor cold = memory_floor(ceilings, traffic(8 * MB, 8 * MB, false));
  EXPECT_EQ(cold.level, "l2+dram");
  EXPECT_EQ(cold.l2_resident_bytes, 8 * MB);
  EXPECT_NEAR(cold.floor_us, (8.0 * MB / 4.4e12 + 8.0 * MB / 10.0e12) * 1e6, 1e-9);
  EXPECT_DOUBLE_EQ(cold.uncertainty, 0.03);  // the reads' ceiling's spread
  // Reads alone, flushed, all come from DRAM.
  const roofline_floor cold_reads = memory_floor(ceilings, traffic(16 * MB, 0, false));
  EXPECT_EQ(cold_reads.level, "dram");
  EXPECT_DOUBLE_EQ(cold_reads.ceiling_bytes_per_second, 4.4e12);
  // Writes beyond the L2's size reach DRAM during the launch.
  const roofline_floor cold_large = memory_floor(ceilings, traffic(200 * MB, 200 * MB, false));
  EXPECT_EQ(cold_large.l2_resident_bytes, l2);
  EXPECT_NEAR(cold_large.floor_us,
              (340.0 * MB / ceilings.dram_for(200 * MB, 140 * MB) + 60.0 * MB / 10.0e12) * 1e6,
              1e-9);
  // Between one and two L2s, as much as the L2 holds may come from it.
  const roofline_floor between = memory_floor(ceilings, traffic(45 * MB, 45 * MB));
  EXPECT_EQ(between.level, "l2+dram");
  EXPECT_EQ(between.l2_resident_bytes, l2);
  EXPECT_NEAR(between.floor_us, (30.0 * MB / 4.0e12 + 60.0 * MB / 10.0e12) * 1e6, 1e-9);
}

TEST(RooflineFloor, RotatedSetsSpanningTwiceTheL2LeaveNothingThere) {
  // Thirty sets of 4 MB make twice the 60 MB L2: each launch finds its set evicted.
  EXPECT_EQ(memory_floor(ceilings, traffic(2 * MB, 2 * MB, true, 30)).level, "dram");
  // The rotation's cap of 256 sets leaves 16 KB sets spanning 4 MB, all of it in the L2.
  const roofline_floor tiny = memory_floor(ceilings, traffic(8000, 8000, true, 256));
  EXPECT_EQ(tiny.level, "l2");
  EXPECT_EQ(tiny.l2_resident_bytes, 16000);
  // 300 KB sets span 76.8 MB: each launch may find its share of the L2.
  const roofline_floor share = memory_floor(ceilings, traffic(150'000, 150'000, true, 256));
  EXPECT_EQ(share.level, "l2+dram");
  EXPECT_EQ(share.l2_resident_bytes, l2 / 256);
}

// An embedding lookup of 1024 tokens gathers 8 MB from a 1 GB table and writes 8 MB: one buffer
// set is too large to rotate, and the rows it gathers stay in the L2 from launch to launch. On
// the H100 an honest lookup ran at 3.5 TB/s, above the DRAM's peak.
TEST(RooflineFloor, AGatherIsJudgedByTheBytesItTouchesNotTheTableItGathersFrom) {
  roofline_traffic t = traffic(8 * MB, 8 * MB);
  t.footprint_bytes = 1050 * MB;
  const roofline_floor f = memory_floor(ceilings, t);
  EXPECT_EQ(f.level, "l2");
  EXPECT_EQ(f.l2_resident_bytes, 16 * MB);
  EXPECT_FALSE(impossible_speed(f, ceilings, 16.0 * MB / 5.3e12 * 1e6, 0.0));
  // Flushed before each launch, it reads the rows from DRAM (at most 4.4 TB/s, 1.8 us) and its
  // writes may stay in the L2 (0.8 us): 16 MB in 2.0 us is beyond that, in 3.0 us it is not.
  t.l2_may_hold = false;
  EXPECT_TRUE(impossible_speed(memory_floor(ceilings, t), ceilings, 16.0 * MB / 8.0e12 * 1e6, 0.0));
  EXPECT_FALSE(impossible_speed(memory_floor(ceilings, t), ceilings, 16.0 * MB / 5.3e12 * 1e6, 0.0));
}

TEST(RooflineFloor, AnUnstatedMixIsJudgedAsTheFastestOne) {
  roofline_traffic t = traffic(100 * MB, 100 * MB);
  t.read_bytes = 200 * MB;  // as a task with only "bytes" states it
  t.written_bytes = 0;
  t.mix_known = false;
  t.footprint_bytes = 400 * MB;
  EXPECT_DOUBLE_EQ(memory_floor(ceilings, t).ceiling_bytes_per_second, 4.4e12);
}

TEST(ImpossibleSpeed, ATimeBelowTheFloorBeyondItsUncertaintyIsRejected) {
  const roofline_floor f = memory_floor(ceilings, traffic(134 * MB, 134 * MB));
  EXPECT_FALSE(impossible_speed(f, ceilings, f.floor_us * 1.2, 0.0));
  EXPECT_FALSE(impossible_speed(f, ceilings, f.floor_us, 0.0));
  // Within the ceiling's own uncertainty (at least 2%) and the measurement's noise: possible.
  EXPECT_FALSE(impossible_speed(f, ceilings, f.floor_us * 0.985, 0.0));
  EXPECT_FALSE(impossible_speed(f, ceilings, f.floor_us * 0.95, 0.04));
  const auto why = impossible_speed(f, ceilings, f.floor_us / 19.0, 0.0);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("268000000 bytes"), std::string::npos) << *why;
  EXPECT_NE(why->find("dram ceiling"), std::string::npos) << *why;
  EXPECT_NE(why->find("4000.0 GB/s"), std::string::npos) << *why;
}

TEST(ImpossibleSpeed, NoNoiseMakesADramRateAboveThePeakPossible) {
  const roofline_floor f = memory_floor(ceilings, traffic(134 * MB, 134 * MB));
  const double at_five_tb = 268.0 * MB / 5.0e12 * 1e6;
  EXPECT_TRUE(impossible_speed(f, ceilings, at_five_tb, 0.5));
  // From the L2 the same rate is ordinary.
  const roofline_floor warm = memory_floor(ceilings, traffic(8 * MB, 8 * MB));
  EXPECT_FALSE(impossible_speed(warm, ceilings, 16.0 * MB / 5.0e12 * 1e6, 0.0));
  // Flushed, what the L2 can hold of the writes does not count against the peak; the reads do.
  const roofline_floor cold = memory_floor(ceilings, traffic(8 * MB, 8 * MB, false));
  EXPECT_FALSE(impossible_speed(cold, ceilings, 8.0 * MB / 4.5e12 * 1e6 + 0.8, 0.5));
  EXPECT_TRUE(impossible_speed(cold, ceilings, 8.0 * MB / 5.16e12 * 1e6, 0.7));
}

// Launch times that vary from one launch to the next by up to `noise` (a fraction), each pair's
// two sides independently, by a fixed pseudo-random sequence: what a timing's pairs look like.
std::vector<double> jittered(double us, double noise, int pairs, int stream) {
  std::vector<double> out;
  std::uint64_t x = 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(stream + 1);
  for (int i = 0; i < pairs; ++i) {
    x ^= x << 13U;
    x ^= x >> 7U;
    x ^= x << 17U;
    const double unit = static_cast<double>(x % 2001) / 1000.0 - 1.0;  // [-1, 1]
    out.push_back(us * (1.0 + noise * unit));
  }
  return out;
}

// Output pairs of a kernel taking `control` us after the outputs got what they held and
// `poisoned` us after they got poison, and pause pairs of `back_to_back` and `paused` us beside
// the reference's `reference_ratio`, each side with `noise`.
poisoned_launches launches(double control, double poisoned, double back_to_back, double paused,
                           double reference_ratio = 1.0, double noise = 0.02, int pairs = 32) {
  return {.source = "CUPTI kernel time",
          .control_us = jittered(control, noise, pairs, 1),
          .poisoned_us = jittered(poisoned, noise, pairs, 2),
          .hot_us = back_to_back,
          .back_to_back_us = jittered(back_to_back, noise, 24, 3),
          .paused_us = jittered(paused, noise, 24, 4),
          .pause_us = 280.0,
          .reference_back_to_back_us = jittered(50.0, noise, 24, 5),
          .reference_paused_us = jittered(50.0 * reference_ratio, noise, 24, 6),
          .reference_bytes = 100000000};
}

TEST(OutputDependence, HonestLaunchesTakeAsLongOnPoisonedOutputsAndAfterAPause) {
  for (const double noise : {0.002, 0.02, 0.1}) {
    EXPECT_FALSE(output_dependence(launches(70.0, 70.0, 69.5, 69.5, 1.0, noise))) << noise;
  }
  // A pause that costs the device 4% costs the harness's copy as much: that judges nothing.
  EXPECT_FALSE(output_dependence(launches(70.0, 70.0, 69.5, 72.3, 1.04)));
}

TEST(OutputDependence, AKernelThatSkipsWorkOnWrittenOutputsIsCaught) {
  // Skips an eighth of its blocks when its outputs hold its last answer: the control side, whose
  // outputs got back what they held, is that much quicker; 15% plus 0.5 us of slack hid it.
  const auto eighth = output_dependence(launches(70.0 * 7 / 8, 70.0, 61.0, 61.0));
  ASSERT_TRUE(eighth);
  EXPECT_NE(eighth->find("launches on freshly poisoned outputs took"), std::string::npos)
      << *eighth;
  EXPECT_NE(eighth->find("(99.9%)"), std::string::npos) << *eighth;
  EXPECT_NE(eighth->find("(reference 1)"), std::string::npos) << *eighth;
  EXPECT_NE(eighth->find("poisoned over control 1.1"), std::string::npos) << *eighth;
  // The aim: a skip of 3% of a 60 us case, with launches 1% apart from one to the next.
  EXPECT_TRUE(output_dependence(launches(60.0 * 0.97, 60.0, 58.0, 58.0, 1.0, 0.01)));
  // Too few pairs for an interval at 99.9%: no verdict either way.
  EXPECT_FALSE(output_dependence(launches(35.0, 70.0, 35.0, 35.0, 1.0, 0.02, 10)));
}

TEST(OutputDependence, AKernelFastOnlyBackToBackIsCaughtByItsLaunchesAfterAPause) {
  // Skips blocks when its last launch ended less than a few microseconds ago: its paused
  // launches take 7% longer, the reference's as long as its back-to-back ones.
  const auto back_to_back = output_dependence(launches(70.0, 70.0, 65.4, 70.0, 1.0, 0.01));
  ASSERT_TRUE(back_to_back);
  EXPECT_NE(back_to_back->find("after launches on the same buffers and a pause of 280 us"),
            std::string::npos)
      << *back_to_back;
  EXPECT_NE(back_to_back->find("the harness's copy of 100000000 bytes "), std::string::npos)
      << *back_to_back;
  // The same 7% where the device's pause costs the copy 7% too: the device, not the kernel.
  EXPECT_FALSE(output_dependence(launches(70.0, 70.0, 65.4, 70.0, 1.07, 0.01)));
  // No reference timed (CUPTI saw nothing): nothing to judge a pause by.
  poisoned_launches none = launches(70.0, 70.0, 65.4, 70.0, 1.0, 0.01);
  none.reference_paused_us.clear();
  EXPECT_FALSE(output_dependence(none));
}

// The first case from the H200: an honest rmsnorm launch on poisoned outputs whose events spanned
// 500 us around a CUPTI record of 119 us.
TEST(OutputDependence, ALaunchTakesCuptisTimeOnlyWhereItsRecordIsItsOwnAndFitsTheEvents) {
  EXPECT_DOUBLE_EQ(one_launch_us(500.6, 118.9, 1, 1), 118.9);
  EXPECT_DOUBLE_EQ(one_launch_us(121.0, 509.3, 1, 1), 121.0) << "longer than the events";
  EXPECT_DOUBLE_EQ(one_launch_us(121.0, 121.9, 1, 1), 121.9) << "within the clocks' slack";
  EXPECT_DOUBLE_EQ(one_launch_us(300.0, 250.0, 2, 1), 300.0) << "another kernel's record too";
  EXPECT_DOUBLE_EQ(one_launch_us(300.0, 120.0, 1, 2), 300.0) << "one of the plan's two kernels";
  EXPECT_DOUBLE_EQ(one_launch_us(300.0, 0.0, 0, 0), 300.0) << "nothing recorded";
}

// 1024 tokens of rms_norm's naive baseline on the H100: 10.19 us back to back and 12.32 us after
// a write of 8 MB elsewhere, though data and write fit in the L2 together. Neither side of the
// comparisons is a launch after other work now: the timing's hot time, however far below both
// sides, judges nothing.
TEST(OutputDependence, TheHotTimeIsHeldAgainstNothing) {
  poisoned_launches p = launches(12.32, 12.32, 12.3, 12.3);
  p.hot_us = 10.19;
  EXPECT_FALSE(output_dependence(p));
}

unseen_inputs unseen(std::vector<double> seen_us, std::vector<double> unseen_us) {
  return {.source = "CUPTI kernel time",
          .seen_us = std::move(seen_us),
          .unseen_us = std::move(unseen_us)};
}

TEST(InputDependence, HonestLaunchesTakeAsLongOnInputsTheyHaveNotMet) {
  EXPECT_FALSE(input_dependence(unseen({6.1, 6.0, 6.2}, {6.3, 5.9})));
  // One slow launch among them is noise: every unseen launch must be slower.
  EXPECT_FALSE(input_dependence(unseen({6.1, 6.0, 6.2}, {9.0, 6.1})));
  // Within 15% and half a microsecond of the seen launches' median.
  EXPECT_FALSE(input_dependence(unseen({6.0, 6.0, 6.0}, {7.3, 7.3})));
  // Nothing to compare: no other draw was launched.
  EXPECT_FALSE(input_dependence(unseen({6.0, 6.0, 6.0}, {})));
}

TEST(InputDependence, AKernelThatSkipsWorkOnInputsItHasMetIsCaught) {
  // It copies a kept answer on the draw it was timed on, and computes on the others.
  const auto why = input_dependence(unseen({3.1, 3.0, 3.2}, {9.0, 9.4}));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("took 9.00 and 9.40 us"), std::string::npos) << *why;
  EXPECT_NE(why->find("3.10 us (CUPTI kernel time, median of 3)"), std::string::npos) << *why;
  EXPECT_TRUE(input_dependence(unseen({6.0, 6.0, 6.0}, {7.6, 7.6})));
}

TEST(InputDependence, AnAnswerKeptFromTheTimedDrawIsCaughtWhateverItsTime) {
  unseen_inputs u = unseen({6.1, 6.0, 6.2}, {6.0, 6.1});
  EXPECT_FALSE(kept_answers(u));
  u.differing = {"out on the draw of seed 0x1", "out on the draw of seed 0x2"};
  const auto why = kept_answers(u);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("(out on the draw of seed 0x1; out on the draw of seed 0x2)"),
            std::string::npos)
      << *why;
  EXPECT_FALSE(input_dependence(u)) << "its time was the timed draw's";
}

TEST(InputDependence, TheLaunchesGoOnRecordAndComeBack) {
  unseen_inputs u = unseen({3.1, 3.0, 3.2}, {9.0, 9.4});
  u.in_place_us = {3.3, 3.2};
  u.differing = {"out on the draw of seed 0x1 in place"};
  const unseen_inputs back = unseen_inputs_from_json(to_json(u));
  EXPECT_EQ(back.source, u.source);
  EXPECT_EQ(back.seen_us, u.seen_us);
  EXPECT_EQ(back.unseen_us, u.unseen_us);
  EXPECT_EQ(back.in_place_us, u.in_place_us);
  EXPECT_EQ(back.differing, u.differing);
  // A record from before the launches in place reads back with none.
  nlohmann::json older = to_json(u);
  older.erase("in_place_us");
  EXPECT_TRUE(unseen_inputs_from_json(older).in_place_us.empty());
}

}  // namespace
}  // namespace blaster
