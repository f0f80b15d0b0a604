// blaster profile on the GPU: the counters of CUPTI's range profiler, the diagnosis drawn from
// them, and Nsight Compute's view of the same kernels where it is installed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "benchmarking/profile/counter_stage.hpp"
#include "benchmarking/profile/profile_table.hpp"
#include "benchmarking/runner/bench_runner.hpp"
#include "evidence/store.hpp"
#include "gpu/require_gpu.hpp"
#include "profiling/counters.hpp"

namespace blaster {
namespace {

const std::filesystem::path source_dir = [] {
  const char* root = std::getenv("BLASTER_ROOT");
  return std::filesystem::path(root != nullptr && *root != '\0' ? root : BLASTER_SOURCE_DIR);
}();

class ProfileGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    home_ = std::filesystem::temp_directory_path() /
            ("blaster-profile-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(home_);
  }
  void TearDown() override { std::filesystem::remove_all(home_); }

  bench_report profile(std::vector<std::filesystem::path> candidates, bool ncu = false) {
    bench_options options;
    options.root = source_dir;
    options.task = "rmsnorm";
    options.candidates = std::move(candidates);
    options.profile_only = true;
    options.ncu = ncu;
    options.worker_executable = BLASTER_BINARY;
    options.command = "gpu test";
    store records(home_);
    return run_bench(options, records);
  }

  static const variant_result& find(const bench_report& report, const std::string& label) {
    for (const auto& r : report.results) {
      if (r.label == label) return r;
    }
    throw std::runtime_error("no variant " + label);
  }

  std::filesystem::path home_;
};

double counted(const variant_result& r, std::string_view name) {
  const auto counters = plan_counters(r.profile->counters);
  const auto it = counters.find(std::string(name));
  return it == counters.end() ? -1.0 : it->second;
}

TEST_F(ProfileGpu, BytesOverTheMinimumTellAStreamingKernelFromOneThatReadsTwice) {
  BLASTER_REQUIRE_GPU();
  const bench_report report =
      profile({source_dir / "kernels" / "rmsnorm" / "rmsnorm_vec_regs.cu",
               source_dir / "tests" / "profiling" / "reads_twice.cu",
               source_dir / "tests" / "profiling" / "one_warp_per_sm.cu"});
  for (const auto& r : report.results) {
    ASSERT_EQ(r.status, "profiled") << r.label << ": " << to_string(r.reason) << " " << r.message;
    ASSERT_TRUE(r.profile) << r.label;
    ASSERT_TRUE(r.profile->counters.unavailable.empty()) << r.profile->counters.unavailable;
    ASSERT_TRUE(r.profile->diagnosis) << r.label;
    EXPECT_GT(r.profile->counters.passes, 1) << r.label;
    EXPECT_FALSE(r.profile->counters.chip.empty());
    ASSERT_EQ(r.profile->counters.kernels.size(), 1U) << r.label;
    ASSERT_TRUE(r.profile->counters.kernels[0].occupancy) << r.label;
    EXPECT_GT(counted(r, counter::duration_ns), 0.0) << r.label;
    for (const auto& line : diagnostic_lines(*r.profile)) std::cout << r.label << ": " << line << '\n';
  }
  // One read and one write of every element: the task's minimal bytes, each way, within 3%
  // (the writes with the dirty lines the L2 wrote back after the kernel).
  const counter_diagnosis& streaming = *find(report, "rmsnorm_vec_regs[VEC=4,BLOCK=128]").profile->diagnosis;
  ASSERT_TRUE(streaming.read_over_minimal && streaming.written_over_minimal);
  EXPECT_NEAR(*streaming.read_over_minimal, 1.0, 0.03);
  EXPECT_NEAR(*streaming.written_over_minimal, 1.0, 0.03);
  EXPECT_EQ(streaming.bound, bound_by::bandwidth) << streaming.line;

  const counter_diagnosis& twice = *find(report, "reads_twice").profile->diagnosis;
  ASSERT_TRUE(twice.read_over_minimal);
  EXPECT_NEAR(*twice.read_over_minimal, 2.0, 0.2) << twice.line;
  EXPECT_NEAR(*twice.written_over_minimal, 1.0, 0.05) << twice.line;

  // One warp per SM: far from every peak, with almost no warps to hide the latency.
  const variant_result& starved = find(report, "one_warp_per_sm");
  EXPECT_EQ(starved.profile->diagnosis->bound, bound_by::latency) << starved.profile->diagnosis->line;
  EXPECT_LT(counted(starved, counter::achieved_occupancy_pct), 5.0);
  EXPECT_EQ(starved.profile->diagnosis->top_stalls.at(0).reason, "long_scoreboard");
}

TEST_F(ProfileGpu, NsightComputeCountsWhatTheRangeProfilerCounts) {
  BLASTER_REQUIRE_GPU();
  if (!find_ncu()) GTEST_SKIP() << "Nsight Compute (ncu) is not installed here";
  const bench_report report =
      profile({source_dir / "kernels" / "rmsnorm" / "rmsnorm_vec_regs.cu"}, /*ncu=*/true);
  const variant_result& r = find(report, "rmsnorm_vec_regs[VEC=4,BLOCK=128]");
  ASSERT_TRUE(r.profile);
  ASSERT_TRUE(r.profile->ncu) << r.profile->ncu_unavailable;
  EXPECT_EQ(r.profile->ncu_report_sha256.size(), 64U);
  store records(home_);
  EXPECT_TRUE(records.cas().contains(r.profile->ncu_report_sha256));
  const auto agreement = ncu_agreement(*r.profile);
  ASSERT_FALSE(agreement.empty());
  // The quantities of the work itself; time and the stall ratios vary from run to run.
  for (const auto* name : {&counter::dram_bytes_read, &counter::dram_bytes_written,
                           &counter::instructions, &counter::dram_throughput_pct,
                           &counter::achieved_occupancy_pct, &counter::sm_throughput_pct}) {
    bool seen = false;
    for (const auto& a : agreement) {
      if (a.counter != *name) continue;
      seen = true;
      EXPECT_LE(a.difference, 0.05) << a.counter << ": CUPTI " << a.cupti << ", ncu " << a.ncu;
    }
    EXPECT_TRUE(seen) << *name;
  }
  for (const auto& a : agreement) {
    std::cout << a.counter << ": CUPTI " << a.cupti << ", ncu " << a.ncu << " ("
              << 100 * a.difference << "%)\n";
  }
}

}  // namespace
}  // namespace blaster
