#include "benchmarking/report/result_printer.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "benchmarking/runner/bench_runner.hpp"

namespace blaster {
namespace {

// A passed result whose plan ran two kernels, with CUPTI's device time of each.
bench_report two_kernel_report() {
  bench_report report;
  report.task = "layernorm";
  variant_result r;
  r.candidate = "split";
  r.label = "split[THREADS=512]";
  r.status = "passed";
  r.time_us = 180.0;
  r.bandwidth_gbs = 1600.0;
  r.copy_bandwidth_pct = 40.0;
  timing_samples t;
  t.cupti.kernel_us = 178.0;
  // As CUPTI's record lists them: by name.
  t.cupti.kernels = {{.kernel = "apply<512>", .count = 6, .us = 136.5},
                     {.kernel = "stats<512>", .count = 6, .us = 41.5}};
  r.timing = t;
  report.results.push_back(r);
  return report;
}

TEST(ResultPrinter, APlanOfSeveralKernelsShowsEachKernelsDeviceTime) {
  std::ostringstream text;
  print_bench_table(two_kernel_report(), text);
  EXPECT_NE(text.str().find("kernel us by kernel: apply<512> 136.50, stats<512> 41.50"),
            std::string::npos)
      << text.str();
}

TEST(ResultPrinter, MangledKernelNamesShowAsTheirTemplates) {
  bench_report report = two_kernel_report();
  report.results[0].timing->cupti.kernels = {
      {.kernel = "_Z15layernorm_applyILi512ELi4EEvP6__halfPKS0_S3_S3_PK6float2iif",
       .count = 6,
       .us = 136.5},
      {.kernel = "_Z21layernorm_chunk_statsILi512ELi4EEvP6float2PK6__halfii",
       .count = 6,
       .us = 41.5}};
  std::ostringstream text;
  print_bench_table(report, text);
  EXPECT_NE(text.str().find(
                "kernel us by kernel: layernorm_apply<512, 4> 136.50, layernorm_chunk_stats<512, "
                "4> 41.50"),
            std::string::npos)
      << text.str();
}

TEST(ResultPrinter, APlanOfOneKernelHasNoBreakdownLine) {
  bench_report report = two_kernel_report();
  report.results[0].timing->cupti.kernels = {{.kernel = "stats<512>", .count = 6, .us = 178.0}};
  std::ostringstream text;
  print_bench_table(report, text);
  EXPECT_EQ(text.str().find("kernel us by kernel"), std::string::npos) << text.str();
}

TEST(ResultPrinter, ARunOnSeveralGpusNamesThemAndWhereItsVerdictsWereTimed) {
  bench_report report = two_kernel_report();
  std::ostringstream one;
  print_bench_table(report, one);
  EXPECT_EQ(one.str().find("GPUs:"), std::string::npos) << "one GPU: the device line names it";
  for (const char* uuid : {"GPU-aa", "GPU-bb"}) {
    report.gpus.push_back(cuda::device_properties{});
    report.gpus.back().name = "NVIDIA H200";
    report.gpus.back().uuid = uuid;
  }
  std::ostringstream two;
  print_bench_table(report, two);
  EXPECT_NE(two.str().find("spread over 2 NVIDIA H200 (GPU-aa, GPU-bb); every session that a "
                           "verdict compares ran on the first"),
            std::string::npos)
      << two.str();
}

}  // namespace
}  // namespace blaster
