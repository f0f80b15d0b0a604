// blaster bench on the rmsnorm task, on the GPU: the baseline and the optimized candidate pass
// every check of every case and are timed; so do the inference suite's rms_norm and
// fused_add_rms_norm at their served sizes. (tests/gpu/adversarial_test.cpp covers rejections.)
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "benchmarking/runner/bench_runner.hpp"
#include "benchmarking/runner/warm_bench.hpp"
#include "evidence/store.hpp"
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
    home_ =
        std::filesystem::temp_directory_path() / ("blaster-gpu-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(home_);
  }
  void TearDown() override { std::filesystem::remove_all(home_); }

  bench_report bench(std::vector<std::filesystem::path> candidates, int sessions = 1,
                     warm_bench* series = nullptr, const std::string& timed_case = {},
                     const std::string& task = "rmsnorm") {
    bench_options options;
    options.timed_case = timed_case;
    options.sessions = sessions;
    options.cooldown_s = 0.0;
    options.root = source_dir;
    options.task = task;
    options.use_tuned = false;  // every configuration, whatever a table of this device says
    options.candidates = std::move(candidates);
    options.timing.max_samples = 30;
    options.worker_executable = BLASTER_BINARY;
    options.command = "gpu test";
    store records(home_);
    return run_bench(options, records, series);
  }

  std::filesystem::path home_;
};

TEST_F(BenchRmsnormGpu, OptimizedCandidatePassesEveryCaseAndBeatsTheBaseline) {
  BLASTER_REQUIRE_GPU();
  const bench_report report =
      bench({source_dir / "kernels" / "rmsnorm" / "rmsnorm_vec_regs.cu"}, /*sessions=*/2);
  // The ceilings, measured on the device: the L2 is faster than DRAM, and no kernel of ours moves
  // bytes through DRAM faster than the memory's clock and bus allow.
  ASSERT_TRUE(report.memory);
  const memory_ceilings& m = *report.memory;
  EXPECT_GT(m.copy.bytes_per_second, 0.0);
  EXPECT_GT(m.read.bytes_per_second, 0.0);
  EXPECT_GT(m.write.bytes_per_second, 0.0);
  EXPECT_GT(m.l2.bytes_per_second, m.copy.bytes_per_second);
  EXPECT_GT(m.peak_bytes_per_second, 0.0);
  EXPECT_LE(m.dram_for(1, 1), m.dram_bound());
  for (const auto* c : {&m.copy, &m.read, &m.write}) {
    EXPECT_LE(c->bytes_per_second, m.peak_bytes_per_second * 1.02) << c->config;
    EXPECT_LT(c->spread, 0.2) << c->config;
  }
  // An empty kernel's floor, in each mode; graph replay submits fastest.
  ASSERT_TRUE(report.floors);
  EXPECT_GT(report.floors->us[timing_mode::hot], 0.0);
  EXPECT_GT(report.floors->us[timing_mode::cold], 0.0);
  EXPECT_LT(report.floors->us[timing_mode::graph], report.floors->us[timing_mode::hot]);
  // The baseline was timed a second time in each session, for the A/A check.
  ASSERT_TRUE(report.aa);
  EXPECT_EQ(report.aa_medians_us.size(), 2U);
  EXPECT_NEAR(report.aa->ratio, 1.0, 0.05);
  const variant_result* baseline = nullptr;
  int optimized = 0;
  for (const auto& r : report.results) {
    ASSERT_EQ(r.status, "passed") << r.label << ": " << to_string(r.reason) << " " << r.message;
    // Every case was checked with every seed before the canonical case was timed.
    std::set<std::string> cases;
    for (const auto& c : r.checks) cases.insert(c.case_name);
    EXPECT_EQ(cases.size(), 6U) << r.label;  // every case but the large one, which is not timed
    EXPECT_EQ(r.checks.size(), 6U * report.seeds.size()) << r.label;
    ASSERT_TRUE(r.timing && r.time_us && r.speedup && r.copy_bandwidth_pct) << r.label;
    EXPECT_GT(*r.time_us, 0.0);
    EXPECT_EQ(r.session_medians_us.size(), 2U) << r.label;
    EXPECT_LT(r.max_noise, 0.05) << r.label;
    // 67 million elements take tens of microseconds: far above any launch floor.
    EXPECT_FALSE(r.launch_bound) << r.label;
    // 268 MB: more than twice the L2, so judged against DRAM, and above its floor.
    ASSERT_TRUE(r.floor) << r.label;
    EXPECT_EQ(r.floor->level, "dram") << r.label;
    EXPECT_GT(*r.time_over_floor, 1.0) << r.label;
    // Launches on poisoned outputs took as long as launches after the same write of what the
    // outputs held: 32 pairs of tens of microseconds, whose interval holds 1.
    ASSERT_TRUE(r.poisoned) << r.label;
    EXPECT_EQ(r.poisoned->poisoned_us.size(), 32U) << r.label;
    EXPECT_EQ(r.poisoned->control_us.size(), 32U) << r.label;
    EXPECT_FALSE(output_dependence(*r.poisoned)) << r.label << " " << to_json(*r.poisoned).dump();
    const auto output = output_ratio(*r.poisoned);
    ASSERT_TRUE(output) << r.label;
    EXPECT_LE(output->low, 1.0) << r.label;
    // And launches after a pause on the same buffers as fast as back to back, beside the
    // reference's pairs.
    EXPECT_EQ(r.poisoned->paused_us.size(), 24U) << r.label;
    EXPECT_EQ(r.poisoned->back_to_back_us.size(), 24U) << r.label;
    EXPECT_EQ(r.poisoned->reference_paused_us.size(), 24U) << r.label;
    EXPECT_GT(r.poisoned->reference_bytes, 0U) << r.label;
    EXPECT_GE(r.poisoned->pause_us, 200.0) << r.label;
    // CUPTI saw exactly the plan's one kernel, once per launch, and its device time fits
    // inside the events around it.
    const cupti_account& cupti = r.timing->cupti;
    EXPECT_TRUE(cupti.error.empty()) << r.label << ": " << cupti.error;
    EXPECT_TRUE(cupti.matches_plan) << r.label;
    ASSERT_EQ(cupti.kernels.size(), 1U) << r.label;
    EXPECT_EQ(cupti.kernels[0].count, r.timing->inner) << r.label;
    EXPECT_GT(cupti.kernel_us, 0.0);
    // The plan's one kernel has all of the device time.
    EXPECT_NEAR(cupti.kernels[0].us, cupti.kernel_us, 1e-9 * cupti.kernel_us) << r.label;
    EXPECT_LE(cupti.kernel_us, cupti.event_us * 1.02 + 0.5) << r.label;
    if (r.baseline) {
      baseline = &r;
      EXPECT_DOUBLE_EQ(*r.speedup, 1.0);
      EXPECT_FALSE(r.verdict);
    } else {
      ++optimized;
      // Two sessions are too few for a verdict other than inconclusive.
      ASSERT_TRUE(r.verdict) << r.label;
      EXPECT_EQ(r.verdict->v, verdict::inconclusive) << r.label;
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

// An honest kernel passes the timing's output checks at every served size, whatever share of
// the L2 its data fills: at 1024 tokens an H100 rejected rms_norm's naive baseline and a tuned
// configuration in some sessions, and every variant of fused_add_rms_norm in the first.
TEST_F(BenchRmsnormGpu, HonestKernelsPassTheTimingsOutputChecksAtEveryServedSize) {
  BLASTER_REQUIRE_GPU();
  const std::vector<std::pair<std::string, std::vector<std::string>>> sizes = {
      {"rms_norm", {"t16", "t128", "t1024", "t8192"}}, {"fused_add_rms_norm", {"t1024", "t8192"}}};
  for (const auto& [task, cases] : sizes) {
    warm_bench series(/*keep_worker=*/false);
    series.cases = cases;
    const auto candidate = source_dir / "kernels" / task / (task + "_regs.cu");
    for (const auto& c : cases) {
      const bench_report report = bench({candidate}, /*sessions=*/3, &series, c, task);
      ASSERT_EQ(report.results.size(), 4U) << task << " " << c;  // init, THREADS 128, 256, 512
      for (const auto& r : report.results) {
        std::string evidence = fmt::format("{} {}", to_string(r.reason), r.message);
        if (r.poisoned) evidence += fmt::format("\n{}", to_json(*r.poisoned).dump());
        if (r.unseen) evidence += fmt::format("\n{}", to_json(*r.unseen).dump());
        EXPECT_EQ(r.status, "passed") << task << " " << c << " " << r.label << ": " << evidence;
      }
    }
  }
}

// A loop's kept worker serves its evaluations in one CUDA context, made at its first request; each
// evaluation of a candidate that reaches the device heap ends the worker, so that the next
// evaluation, whatever it is, gets a fresh one.
// A series over several cases (tune's sizes, a portfolio's task) gates each variant once: a later
// run times it on its own case against the outputs the first run's gate left for that case, so
// a mix-up of cases would fail the timing's output check.
TEST_F(BenchRmsnormGpu, ASeriesGatesEachVariantOnceAndTimesEachOfItsCases) {
  BLASTER_REQUIRE_GPU();
  warm_bench series(/*keep_worker=*/false);
  series.cases = {"canonical", "ragged"};
  const auto candidate = source_dir / "kernels" / "rmsnorm" / "rmsnorm_vec_regs.cu";
  const bench_report first = bench({candidate}, 1, &series, "canonical");
  const bench_report second = bench({candidate}, 1, &series, "ragged");
  EXPECT_EQ(second.seed, first.seed);  // one data for the whole series
  EXPECT_EQ(second.timed_case, "ragged");
  ASSERT_EQ(first.results.size(), second.results.size());
  for (std::size_t i = 0; i < first.results.size(); ++i) {
    const variant_result& gated = first.results[i];
    const variant_result& reused = second.results[i];
    EXPECT_EQ(gated.status, "passed") << gated.label << ": " << gated.message;
    EXPECT_FALSE(gated.gated_in_run) << gated.label;
    EXPECT_EQ(reused.status, "passed") << reused.label << ": " << reused.message;
    EXPECT_EQ(reused.gated_in_run, std::optional<std::int64_t>(first.run_id)) << reused.label;
    EXPECT_EQ(reused.checks.size(), gated.checks.size()) << reused.label;
    EXPECT_TRUE(reused.time_us) << reused.label;
  }
  // A case the series' data was not prepared for is refused.
  EXPECT_ANY_THROW(bench({candidate}, 1, &series, "wide"));
}

TEST_F(BenchRmsnormGpu, AKeptWorkerKeepsItsContextUntilACandidateUsesTheDeviceHeap) {
  BLASTER_REQUIRE_GPU();
  warm_bench series(/*keep=*/true);
  const auto vec_regs = source_dir / "kernels" / "rmsnorm" / "rmsnorm_vec_regs.cu";
  // A rejection's message, and the poisoned launches' times where it has them.
  auto why = [](const variant_result& r) {
    std::string text = r.label + ": " + std::string(to_string(r.reason)) + " " + r.message;
    if (r.poisoned) text += "\n" + to_json(*r.poisoned).dump();
    return text;
  };
  // The evaluations of a run that made a context: the first of each worker. (A later run's
  // baseline was gated by the first, whose gate profile it carries.)
  auto contexts_made = [](const bench_report& report) {
    int made = 0;
    for (const auto& r : report.results) {
      made += !r.baseline && r.gate_profile.contains("context") ? 1 : 0;
      made += r.timing_profile.contains("context") ? 1 : 0;
    }
    return made;
  };

  // The baseline's gate, the worker's first request, made the context; nothing after it did.
  const bench_report first = bench({vec_regs}, 1, &series);
  EXPECT_TRUE(first.kept_worker);
  ASSERT_EQ(first.results.size(), 5U);
  for (const auto& r : first.results) {
    EXPECT_EQ(r.status, "passed") << why(r);
  }
  EXPECT_TRUE(first.results[0].gate_profile.contains("context"));
  EXPECT_EQ(contexts_made(first), 0);
  EXPECT_EQ(series.workers_started(), 1);

  // Its gate ends the first worker, its timing the second; the baseline's timing between them
  // (the session's order: baseline, candidate, baseline again) is the second worker's first
  // request, the A/A timing the third's.
  const bench_report heap =
      bench({source_dir / "tests" / "gpu" / "kernels" / "heap_workspace.cu"}, 1, &series);
  ASSERT_EQ(heap.results.size(), 2U);
  for (const auto& r : heap.results) EXPECT_EQ(r.status, "passed") << why(r);
  EXPECT_EQ(series.workers_started(), 3);
  EXPECT_TRUE(heap.results[0].timing_profile.contains("context"));
  EXPECT_EQ(contexts_made(heap), 1) << "the A/A timing keeps no profile of its own";
  EXPECT_FALSE(heap.results[1].timing_profile.contains("context"));

  // The third worker, which only timed the baseline, goes on serving in its context.
  const bench_report after = bench({vec_regs}, 1, &series);
  ASSERT_EQ(after.results.size(), 5U);
  for (const auto& r : after.results) EXPECT_EQ(r.status, "passed") << why(r);
  EXPECT_EQ(contexts_made(after), 0);
  EXPECT_EQ(series.workers_started(), 3);
}

}  // namespace
}  // namespace blaster
