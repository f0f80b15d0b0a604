#include "profiling/ncu_report.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <stdexcept>

#include "benchmarking/candidate/kernel_binding.hpp"
#include "benchmarking/profile/instruction_flush.hpp"
#include "benchmarking/timing/device_compare.hpp"
#include "benchmarking/timing/l2_flush.hpp"
#include "benchmarking/timing/buffer_copy.hpp"
#include "benchmarking/timing/pattern_fill.hpp"
#include "benchmarking/timing/sm_clock_probe.hpp"
#include "benchmarking/timing/stream_hold.hpp"

namespace blaster {
namespace {

const std::vector<std::string> metrics{"dram__bytes_read.sum", "dram__bytes_write.sum",
                                       "dram__throughput.avg.pct_of_peak_sustained_elapsed"};

// What `ncu --import R --csv --page raw --print-units base --metrics ...` printed on the H200
// for the rmsnorm baseline (the first 11 columns as ncu writes them).
constexpr const char* recorded =
    R"csv(==PROF== Connected to process
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","dram__bytes_read.sum","dram__bytes_write.sum","dram__throughput.avg.pct_of_peak_sustained_elapsed"
"","","","","","","","","","","","byte","byte","%"
"0","9044","blaster","127.0.0.1","rmsnorm_naive","1","13","(256, 1, 1)","(4096, 1, 1)","0","9.0","169,379,072","113,859,072","52.39"
"1","9044","blaster","127.0.0.1","rmsnorm_apply","1","13","(256, 1, 1)","(4096, 1, 1)","0","9.0","n/a","1,024","0"
)csv";

TEST(NcuReport, ReadsEachKernelsCountersInLaunchOrder) {
  const counter_profile p = parse_ncu_csv(recorded, metrics);
  EXPECT_EQ(p.source, "Nsight Compute");
  ASSERT_EQ(p.kernels.size(), 2U);
  EXPECT_EQ(p.kernels[0].kernel, "rmsnorm_naive");
  EXPECT_EQ(p.kernels[0].launch, 0U);
  EXPECT_DOUBLE_EQ(p.kernels[0].counters.at("dram__bytes_read.sum"), 169379072);
  EXPECT_DOUBLE_EQ(p.kernels[0].counters.at("dram__bytes_write.sum"), 113859072);
  EXPECT_DOUBLE_EQ(
      p.kernels[0].counters.at("dram__throughput.avg.pct_of_peak_sustained_elapsed"), 52.39);
  // A value ncu could not give is absent, not zero.
  EXPECT_FALSE(p.kernels[1].counters.contains("dram__bytes_read.sum"));
  EXPECT_DOUBLE_EQ(p.kernels[1].counters.at("dram__bytes_write.sum"), 1024);
  EXPECT_TRUE(p.missing.empty());
}

// ncu prints two decimals, or six digits in scientific notation, and drops trailing zeros: each
// value stands for every number that prints as it does.
// Two runs of the same two-kernel plan, as the worker under ncu launches them.
constexpr const char* two_runs =
    R"csv("ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","dram__bytes_read.sum","dram__bytes_write.sum","dram__throughput.avg.pct_of_peak_sustained_elapsed"
"","","","","","","","","","","","byte","byte","%"
"0","9044","blaster","127.0.0.1","rmsnorm_naive","1","13","(256, 1, 1)","(4096, 1, 1)","0","9.0","169,379,072","113,859,072","52.39"
"1","9044","blaster","127.0.0.1","rmsnorm_apply","1","13","(256, 1, 1)","(4096, 1, 1)","0","9.0","n/a","1,024","0"
"2","9044","blaster","127.0.0.1","rmsnorm_naive","1","13","(256, 1, 1)","(4096, 1, 1)","0","9.0","169,379,072","113,859,072","50.39"
"3","9044","blaster","127.0.0.1","rmsnorm_apply","1","13","(256, 1, 1)","(4096, 1, 1)","0","9.0","2,048","3,072","0"
)csv";

TEST(NcuReport, RunsOfAPlanAreTakenLaunchByLaunch) {
  const counter_profile p = parse_ncu_csv(two_runs, metrics);
  const std::vector<kernel_counters> median = median_by_launch(p.kernels, 2, 2);
  ASSERT_EQ(median.size(), 2U);
  EXPECT_EQ(median[0].kernel, "rmsnorm_naive");
  EXPECT_EQ(median[1].launch, 1U);
  EXPECT_DOUBLE_EQ(median[0].counters.at("dram__throughput.avg.pct_of_peak_sustained_elapsed"),
                   51.39);
  EXPECT_DOUBLE_EQ(median[1].counters.at("dram__bytes_write.sum"), 2048);
  // Each median (of two counts, their mean) keeps the spread of its counts.
  const auto spread = median[0].range.at("dram__throughput.avg.pct_of_peak_sustained_elapsed");
  EXPECT_DOUBLE_EQ(spread.first, 50.39);
  EXPECT_DOUBLE_EQ(spread.second, 52.39);
  EXPECT_FALSE(median[1].range.contains("dram__bytes_read.sum"));
  // Counted in one run only: no median.
  EXPECT_FALSE(median[1].counters.contains("dram__bytes_read.sum"));
  // A count that is not whole runs of the plan, or runs that launched other kernels, is refused.
  EXPECT_THROW((void)median_by_launch(p.kernels, 3, 1), std::invalid_argument);
  EXPECT_THROW((void)median_by_launch(p.kernels, 1, 4), std::invalid_argument);
}

TEST(NcuReport, KeepsHowPreciselyNcuPrintedEachValue) {
  const std::vector<std::string> asked{
      "smsp__cycles_elapsed.avg.per_second",
      "smsp__average_warps_issue_stalled_drain_per_issue_active.ratio",
      "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio", "dram__bytes_read.sum"};
  const std::string csv =
      R"("ID","Kernel Name","smsp__cycles_elapsed.avg.per_second",)"
      R"("smsp__average_warps_issue_stalled_drain_per_issue_active.ratio",)"
      R"("smsp__average_warps_issue_stalled_wait_per_issue_active.ratio","dram__bytes_read.sum")"
      "\n"
      R"("0","rmsnorm_vec_regs","1.95638e+09","0","1.47","134,310,000")"
      "\n";
  const counter_profile p = parse_ncu_csv(csv, asked);
  ASSERT_EQ(p.kernels.size(), 1U);
  const auto& r = p.kernels[0].resolution;
  EXPECT_DOUBLE_EQ(p.kernels[0].counters.at(asked[0]), 1.95638e9);
  EXPECT_DOUBLE_EQ(r.at(asked[0]), 5e3);
  EXPECT_DOUBLE_EQ(r.at(asked[1]), 0.005);
  EXPECT_DOUBLE_EQ(r.at(asked[2]), 0.005);
  EXPECT_DOUBLE_EQ(r.at(asked[3]), 0.005);
  // What the CSV lacked has no resolution either.
  EXPECT_FALSE(
      parse_ncu_csv(recorded, metrics).kernels[1].resolution.contains("dram__bytes_read.sum"));
}

// A stall ratio is read as the quotient of the counts ncu prints whole, where that quotient
// prints as ncu's ratio does; otherwise the printed ratio stays, with its resolution.
TEST(NcuReport, AStallRatioIsTheQuotientOfItsCounts) {
  const std::vector<std::string> asked{
      "smsp__average_warps_issue_stalled_imc_miss_per_issue_active.ratio",
      "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio"};
  const std::string csv =
      R"("ID","Kernel Name","smsp__average_warps_issue_stalled_imc_miss_per_issue_active.ratio",)"
      R"("smsp__average_warps_issue_stalled_wait_per_issue_active.ratio",)"
      R"("smsp__warps_issue_stalled_imc_miss.sum","smsp__warps_issue_stalled_wait.sum",)"
      R"("smsp__issue_active.sum")"
      "\n"
      // 1,378 / 100,000 prints as 0.01; 93,000 / 100,000 would print 0.93, not 1.47.
      R"("0","matmul_smallk_mma","0.01","1.47","1,378","93,000","100,000")"
      "\n"
      // Without the cycles that issued, the printed ratios stand.
      R"("1","matmul_smallk_mma","0.01","1.47","1,378","93,000","n/a")"
      "\n";
  const counter_profile p = parse_ncu_csv(csv, asked);
  ASSERT_EQ(p.kernels.size(), 2U);
  EXPECT_DOUBLE_EQ(p.kernels[0].counters.at(asked[0]), 0.01378);
  EXPECT_FALSE(p.kernels[0].resolution.contains(asked[0]));
  EXPECT_DOUBLE_EQ(p.kernels[0].counters.at(asked[1]), 1.47);
  EXPECT_DOUBLE_EQ(p.kernels[0].resolution.at(asked[1]), 0.005);
  EXPECT_DOUBLE_EQ(p.kernels[1].counters.at(asked[0]), 0.01);
  EXPECT_DOUBLE_EQ(p.kernels[1].resolution.at(asked[0]), 0.005);
  // The counts serve the ratios; the profile holds what was asked for.
  EXPECT_FALSE(p.kernels[0].counters.contains("smsp__issue_active.sum"));
  EXPECT_TRUE(p.missing.empty());
}

TEST(NcuReport, AStallRatioBringsItsCountsIntoTheRequest) {
  const auto metric_list = [](const std::vector<std::string>& args) {
    const auto m = std::find(args.begin(), args.end(), "--metrics");
    return m == args.end() || m + 1 == args.end() ? std::string() : *(m + 1);
  };
  const std::vector<std::string> asked{
      "dram__bytes_read.sum", "smsp__average_warps_issue_stalled_imc_miss_per_issue_active.ratio",
      "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio"};
  const std::string expected =
      "dram__bytes_read.sum,smsp__average_warps_issue_stalled_imc_miss_per_issue_active.ratio,"
      "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,"
      "smsp__warps_issue_stalled_imc_miss.sum,smsp__warps_issue_stalled_wait.sum,"
      "smsp__issue_active.sum";
  EXPECT_EQ(metric_list(ncu_profile_arguments("/tmp/r", "/tmp/r.log", asked, {})), expected);
  EXPECT_EQ(metric_list(ncu_import_arguments("/tmp/r.ncu-rep", "/tmp/r.csv", asked)), expected);
  // No stall ratio, no counts.
  EXPECT_EQ(metric_list(ncu_profile_arguments("/tmp/r", "/tmp/r.log", metrics, {})),
            "dram__bytes_read.sum,dram__bytes_write.sum,"
            "dram__throughput.avg.pct_of_peak_sustained_elapsed");
}

TEST(NcuReport, NamesTheCountersTheReportLacks) {
  std::vector<std::string> asked = metrics;
  asked.emplace_back("sm__warps_active.avg.pct_of_peak_sustained_active");
  EXPECT_EQ(parse_ncu_csv(recorded, asked).missing,
            std::vector<std::string>{"sm__warps_active.avg.pct_of_peak_sustained_active"});
}

TEST(NcuReport, OutputWithoutItsHeaderIsAnError) {
  EXPECT_THROW(parse_ncu_csv("==ERROR== ERR_NVGPUCTRPERM\n", metrics), std::invalid_argument);
}

// ncu's filter and CUPTI's kernel account leave these out by name; resolve_plan refuses any
// candidate kernel with their prefix, which holds only while every one of them carries it.
TEST(NcuReport, EveryKernelTheCountsLeaveOutCarriesThePrefixCandidatesMayNotTake) {
  for (const std::string_view name :
       {l2_flush::kernel_name, instruction_flush::kernel_name, device_compare::kernel_name,
        pattern_fill::kernel_name, buffer_copy::kernel_name, buffer_copy::reference_name,
        sm_clock_probe::kernel_name, stream_hold::kernel_name}) {
    EXPECT_TRUE(name.starts_with(harness_kernel_prefix)) << name;
  }
}

TEST(NcuReport, TheProfileLeavesTheCachesToTheWorkerAndSkipsItsSweeps) {
  const std::vector<std::string_view> uncounted{l2_flush::kernel_name,
                                                instruction_flush::kernel_name};
  const auto args = ncu_profile_arguments("/tmp/r", "/tmp/r.log", metrics, uncounted);
  const std::string joined = [&] {
    std::string s;
    for (const auto& a : args) s += a + " ";
    return s;
  }();
  // A save and restore around each kernel would leave it dirty lines that CUPTI's count lacks.
  EXPECT_NE(joined.find("--cache-control none"), std::string::npos);
  EXPECT_NE(joined.find("--replay-mode application"), std::string::npos);
  EXPECT_NE(joined.find("--clock-control none"), std::string::npos);
  // The sweeps between kernels are the harness's own and stay uncounted; any candidate's are not.
  const auto name = std::find(args.begin(), args.end(), "--kernel-name");
  ASSERT_NE(name, args.end());
  ASSERT_TRUE(std::next(name)->starts_with("regex:"));
  const std::regex counted(std::next(name)->substr(6));
  EXPECT_FALSE(std::regex_search(std::string(l2_flush::kernel_name), counted));
  EXPECT_FALSE(std::regex_search(std::string(instruction_flush::kernel_name), counted));
  EXPECT_TRUE(std::regex_search("rmsnorm_vec_regs", counted));
  // A candidate may name its kernel after a sweep's, but not be one.
  EXPECT_TRUE(std::regex_search("blaster_l2_sweep_fast", counted));
  EXPECT_TRUE(std::regex_search("my_blaster_l2_sweep", counted));
  const auto import = ncu_import_arguments("/tmp/r.ncu-rep", "/tmp/r.csv", metrics);
  EXPECT_NE(std::find(import.begin(), import.end(), "base"), import.end());
}

}  // namespace
}  // namespace blaster
