// blaster bench on the rmsnorm task, on the GPU: wrong candidates are rejected with the reason
// that fits their defect, and the baseline and the optimized candidate pass and are timed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include "benchmarking/bench_runner.hpp"
#include "core/store.hpp"
#include "gpu/require_gpu.hpp"

namespace blaster {
namespace {

// The tree under test: BLASTER_ROOT where scripts/test.sh sets it, else the one built from.
const std::filesystem::path source_dir = [] {
  const char* root = std::getenv("BLASTER_ROOT");
  return std::filesystem::path(root != nullptr && *root != '\0' ? root : BLASTER_SOURCE_DIR);
}();

class BenchRmsnormGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    home_ = std::filesystem::temp_directory_path() /
            ("blaster-gpu-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(home_);
  }
  void TearDown() override { std::filesystem::remove_all(home_); }

  bench_report bench(std::vector<std::filesystem::path> candidates) {
    bench_options options;
    options.root = source_dir;
    options.task = "rmsnorm";
    options.candidates = std::move(candidates);
    options.timing.samples = 10;
    options.command = "gpu test";
    store records(home_);
    return run_bench(options, records);
  }

  std::filesystem::path home_;
};

std::map<std::string, const variant_result*> by_label(const bench_report& report) {
  std::map<std::string, const variant_result*> m;
  for (const auto& r : report.results) m[r.label] = &r;
  return m;
}

TEST_F(BenchRmsnormGpu, RejectsEachWrongCandidateWithItsReason) {
  BLASTER_REQUIRE_GPU();
  const auto fixtures = source_dir / "tests" / "gpu" / "candidates";
  const bench_report report = bench({fixtures});
  ASSERT_TRUE(report.gpu);
  const auto results = by_label(report);

  ASSERT_TRUE(results.contains("init"));
  EXPECT_EQ(results.at("init")->status, "passed") << results.at("init")->message;
  EXPECT_TRUE(results.at("init")->baseline);

  const std::map<std::string, std::string> expected = {
      {"rmsnorm_no_sqrt", "wrong_result"},
      {"rmsnorm_skips_tail", "unwritten_output"},
      {"rmsnorm_nan_on_large", "nonfinite"},
  };
  for (const auto& [label, reason] : expected) {
    ASSERT_TRUE(results.contains(label)) << label;
    const variant_result& r = *results.at(label);
    EXPECT_EQ(r.status, "rejected") << label;
    EXPECT_EQ(r.reason, reason) << label << ": " << r.message;
    EXPECT_FALSE(r.timing) << label << " was timed although it is wrong";
    EXPECT_FALSE(r.message.empty()) << label << " was rejected without evidence";
  }
  // The evidence names the worst element with both values.
  EXPECT_NE(results.at("rmsnorm_no_sqrt")->message.find("worst at"), std::string::npos);
}

TEST_F(BenchRmsnormGpu, OptimizedCandidatePassesEveryCaseAndBeatsTheBaseline) {
  BLASTER_REQUIRE_GPU();
  const bench_report report =
      bench({source_dir / "kernels" / "rmsnorm" / "rmsnorm_vec_regs.cu"});
  ASSERT_TRUE(report.copy);
  EXPECT_GT(report.copy->bytes_per_second, 0.0);
  const variant_result* baseline = nullptr;
  int optimized = 0;
  for (const auto& r : report.results) {
    ASSERT_EQ(r.status, "passed") << r.label << ": " << r.reason << " " << r.message;
    // Every case was checked before the canonical case was timed.
    std::vector<std::string> cases;
    for (const auto& c : r.checks) cases.push_back(c.case_name);
    EXPECT_EQ(cases.size(), 5U) << r.label;
    EXPECT_EQ(cases.back(), "canonical") << r.label;
    ASSERT_TRUE(r.timing && r.speedup && r.roofline_pct) << r.label;
    EXPECT_GT(r.timing->median_us, 0.0);
    if (r.baseline) {
      baseline = &r;
      EXPECT_DOUBLE_EQ(*r.speedup, 1.0);
    } else {
      ++optimized;
    }
  }
  ASSERT_NE(baseline, nullptr);
  EXPECT_EQ(optimized, 4);  // VEC x BLOCK
  // The record of the run is in the store.
  store records(home_);
  auto rows = records.db().prepare("SELECT COUNT(*) FROM results WHERE run_id = ?");
  rows.bind(1, report.run_id);
  ASSERT_TRUE(rows.step());
  EXPECT_EQ(rows.column_int64(0), 5);
}

}  // namespace
}  // namespace blaster
