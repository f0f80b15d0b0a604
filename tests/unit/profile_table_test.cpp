#include "benchmarking/profile/profile_table.hpp"

#include <gtest/gtest.h>

#include "benchmarking/profile/counter_stage.hpp"
#include "profiling/counters.hpp"

namespace blaster {
namespace {

// rmsnorm_vec_regs[VEC=4,BLOCK=128] on the canonical case, as CUPTI and ncu counted it on the
// H200 (one replayed profile each).
diagnostics rmsnorm() {
  diagnostics d;
  d.counters.source = "CUPTI range profiler";
  d.counters.kernels.push_back(
      {.launch = 0,
       .kernel = "_Z16rmsnorm_vec_regsILi4ELi128ELi64EEvP6__halfPKS0_iifi",
       .counters = {{std::string(counter::duration_ns), 68512},
                    {std::string(counter::dram_bytes_read), 134319000},
                    {std::string(counter::dram_bytes_written), 105558000},
                    {std::string(counter::dram_bytes_written_back), 28700000},
                    {std::string(counter::dram_throughput_pct), 72.81}},
       .occupancy = estimate_occupancy({.threads = 128, .registers_per_thread = 40}, {}),
       .resolution = {},
       .range = {}});
  d.ncu = counter_profile{};
  d.ncu->source = "Nsight Compute";
  d.ncu->kernels.push_back({.launch = 0,
                            .kernel = "rmsnorm_vec_regs",
                            .counters = {{std::string(counter::dram_bytes_read), 134305000},
                                         {std::string(counter::dram_throughput_pct), 76.15}},
                            .occupancy = std::nullopt,
                            .resolution = {},
                            .range = {}});
  d.ncu_report_sha256 = std::string(64, 'c');
  return d;
}

TEST(ProfileTable, NcuIsSetBesideCuptiCounterByCounter) {
  const auto agreement = ncu_agreement(rmsnorm());
  ASSERT_EQ(agreement.size(), 2U);  // the counters both have
  for (const auto& a : agreement) {
    if (a.counter == counter::dram_bytes_read) {
      EXPECT_NEAR(a.difference, 1.04e-4, 1e-6);
    } else {
      EXPECT_EQ(a.counter, counter::dram_throughput_pct);
      EXPECT_NEAR(a.difference, 0.0439, 1e-4);
    }
  }
}

TEST(ProfileTable, EachValueShowsTheSpreadOfTheCountsItIsTheMeanOf) {
  diagnostics d = rmsnorm();
  const std::string read(counter::dram_bytes_read);
  d.counters.kernels[0].range = {{read, {134300000, 134330000}}};
  d.ncu->kernels[0].range = {{read, {134305000, 134305000}}};  // no spread: no brackets
  variant_result r;
  r.label = "rmsnorm_vec_regs[VEC=4,BLOCK=128]";
  r.status = "profiled";
  r.profile = d;
  bench_report report;
  report.task = "rmsnorm";
  report.results.push_back(r);
  const result_table t = profile_table(report);
  std::string lines;
  for (const auto& l : t.rows.at(0).details) lines += l + "\n";
  EXPECT_NE(lines.find("dram__bytes_read.sum (launch 0): CUPTI 1.34319e+08 [1.343e+08, "
                       "1.3433e+08], ncu 1.34305e+08, 0.01% apart"),
            std::string::npos)
      << lines;
}

TEST(ProfileTable, NcusValueStandsForEveryNumberThatPrintsAsItDoes) {
  // layernorm_resident on the H200: ncu printed the drain stalls as "0" and the wait stalls
  // as "1.89".
  const std::string drain = "smsp__average_warps_issue_stalled_drain_per_issue_active.ratio";
  const std::string wait = "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio";
  diagnostics d = rmsnorm();
  d.counters.kernels[0].counters = {{drain, 0.000529264}, {wait, 1.8859}};
  d.ncu->kernels[0].counters = {{drain, 0.0}, {wait, 1.89}};
  d.ncu->kernels[0].resolution = {{drain, 0.005}, {wait, 0.005}};
  for (const auto& a : ncu_agreement(d)) EXPECT_EQ(a.difference, 0.0) << a.counter;
  // Beyond the printed digits, the difference counts from their edge.
  d.counters.kernels[0].counters[wait] = 2.0;
  for (const auto& a : ncu_agreement(d)) {
    if (a.counter == wait) {
      EXPECT_NEAR(a.difference, (2.0 - 1.895) / 2.0, 1e-12);
    }
  }
}

TEST(ProfileTable, TheLinesNameTheDiagnosisTheOccupancyLimiterAndNcusFarthestCounter) {
  variant_result r;
  r.profile = rmsnorm();
  bench_report report;
  report.roofline_mix_known = true;
  report.roofline_read_bytes = 134217728;
  report.roofline_write_bytes = 134217728;
  diagnose_variant(report, r);
  // Not timed: the counted kernel time stands in for the time.
  ASSERT_TRUE(r.profile->diagnosis);
  EXPECT_EQ(r.profile->diagnosis->bound, bound_by::bandwidth);
  EXPECT_NEAR(*r.profile->diagnosis->written_over_minimal, (105558000.0 + 28700000.0) / 134217728,
              1e-9);
  const auto lines = diagnostic_lines(*r.profile);
  ASSERT_EQ(lines.size(), 3U);
  EXPECT_EQ(lines[0].rfind("diagnosis: bandwidth-bound (DRAM at 73% of peak)", 0), 0U) << lines[0];
  EXPECT_EQ(lines[1],
            "rmsnorm_vec_regs<4, 128, 64>: theoretical occupancy 75% (12 blocks per SM, limited by "
            "registers: registers allow 12, shared memory 228, warps 16, blocks 32)");
  EXPECT_NE(lines[2].find("dram__throughput.avg.pct_of_peak_sustained_elapsed (72.81 against "
                          "76.15, 4.4%)"),
            std::string::npos)
      << lines[2];
}

TEST(ProfileTable, WithoutCountersTheReasonIsTheOnlyLine) {
  variant_result r;
  r.profile = diagnostics{};
  r.profile->counters.unavailable = "the driver does not permit GPU performance counters";
  diagnose_variant(bench_report{}, r);
  EXPECT_FALSE(r.profile->diagnosis);
  EXPECT_EQ(diagnostic_lines(*r.profile),
            std::vector<std::string>{
                "counters unavailable: the driver does not permit GPU performance counters"});
}

}  // namespace
}  // namespace blaster
