// What a bench run leaves in the store, from a report put together by hand: the results rows
// and the fuller record (task, device, compilations, gate results, measurements, verdicts).
#include <gtest/gtest.h>

#include <filesystem>

#include "benchmarking/report/run_record.hpp"
#include "benchmarking/report/variant_metrics.hpp"
#include "evidence/store.hpp"

namespace blaster {
namespace {

class RunRecord : public ::testing::Test {
 protected:
  void SetUp() override {
    home_ = std::filesystem::temp_directory_path() /
            ("blaster-run-record-" + std::to_string(::getpid()));
    std::filesystem::remove_all(home_);
  }
  void TearDown() override { std::filesystem::remove_all(home_); }

  // A report of rmsnorm's canonical case, compiled for the H200 by NVRTC 13.0.
  static bench_report canonical_report() {
    bench_report report;
    report.arch = "sm_90a";
    report.nvrtc = "13.0";
    report.timed_case = "canonical";
    return report;
  }

  std::int64_t count(store& s, const std::string& sql) {
    auto q = s.db().prepare(sql);
    EXPECT_TRUE(q.step());
    return q.column_int64(0);
  }

  std::filesystem::path home_;
};

variant_result passed(store& s, const std::string& label, bool baseline, double time_us) {
  variant_result r;
  r.candidate = label;
  r.label = label;
  r.file = label + ".cu";
  r.baseline = baseline;
  r.status = "passed";
  r.source_sha256 = s.cas().put("source of " + label);
  r.cubin_sha256 = s.cas().put("cubin of " + label);
  r.resources = {{.lowered_name = label,
                  .registers = 32,
                  .barriers = -1,
                  .stack_bytes = 0,
                  .spill_store_bytes = -1,
                  .spill_load_bytes = -1,
                  .shared_bytes = 0}};
  case_check check;
  check.case_name = "odd";
  check.seed = 7;
  error_metrics metrics;
  metrics.buffer = "out";
  metrics.elements = 10;
  check.outputs.push_back(metrics);
  check.evidence = check_evidence{.check = 0, .case_name = "odd", .seed = 7};
  r.checks = {check};
  r.timing = timing_samples{};
  r.timing->sample_us = {time_us, time_us};
  r.session_medians_us = {time_us, time_us, time_us, time_us, time_us};
  r.time_us = time_us;
  r.samples_sha256 = s.cas().put("samples of " + label);
  return r;
}

TEST_F(RunRecord, EveryVariantIsOnRecordWithItsChecksTimingsAndVerdict) {
  store s(home_);
  const task_spec task = load_task(std::filesystem::path(BLASTER_SOURCE_DIR) / "tasks/rmsnorm");
  bench_report report = canonical_report();
  report.device = cuda::device_properties{.name = "NVIDIA H200",
                                          .uuid = "u",
                                          .compute_major = 9,
                                          .sm_count = 132,
                                          .driver_version = 13000};
  variant_result baseline = passed(s, "init", true, 120.0);
  baseline.speedup = 1.0;
  variant_result fast = passed(s, "fast", false, 60.0);
  fast.speedup = 2.0;
  verdict_result improved;
  improved.v = verdict::improved;
  improved.speedup = {1.9, 2.1, 2.0};
  improved.sessions = 5;
  fast.verdict = improved;
  variant_result wrong = passed(s, "wrong", false, 0.0);
  wrong.status = "rejected";
  wrong.reason = reason_code::wrong_result;
  wrong.checks[0].reason = reason_code::wrong_result;
  wrong.checks[0].outputs[0].mismatches = 3;
  wrong.timing.reset();
  wrong.time_us.reset();
  variant_result broken;
  broken.candidate = broken.label = "broken";
  broken.status = "rejected";
  broken.reason = reason_code::compile_error;
  broken.log = "broken.cu(3): error: expected a \";\"";
  broken.source_sha256 = s.cas().put("source of broken");
  report.results = {baseline, fast, wrong, broken};

  const std::int64_t run = s.begin_run("test", "rmsnorm", "{}");
  record_run(s, run, task, report);
  s.finish_run(run, "completed", "");

  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM results"), 4);
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM tasks"), 1);
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM task_cases"), 7);  // the large case too
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM device_fingerprints"), 1);
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM compilations"), 4);
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM compilations WHERE succeeded = 0"), 1);
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM compiled_kernels"), 3);
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM gate_results"), 3);
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM gate_results WHERE passed = 0"), 1);
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM measurements"), 2);
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM verdicts"), 2);
  EXPECT_EQ(count(s,
                  "SELECT COUNT(*) FROM verdicts WHERE verdict = 'improved' AND "
                  "speedup_ci_low = 1.9 AND baseline_measurement_id IS NOT NULL"),
            1);
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM verdicts WHERE verdict = 'baseline'"), 1);
  // One row per variant, citing its compilation and (timed) measurement; the digests stay in
  // those rows, and the view reads them from there.
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM variant_results WHERE compilation_id IS NOT NULL"), 4);
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM variant_results WHERE measurement_id IS NOT NULL"), 2);
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM variant_results WHERE cubin_sha256 IS NOT NULL"), 0);
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM results WHERE cubin_sha256 IS NOT NULL"), 3);
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM results WHERE baseline = 1"), 1);
  // Every metric of the registry that a variant has, by tag, and what each tag means.
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM results WHERE time_us IS NOT NULL"), 2);
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM metric_definitions"),
            static_cast<std::int64_t>(variant_metrics().size()));
  for (const auto& m : variant_metrics()) {
    EXPECT_EQ(count(s, fmt::format("SELECT COUNT(*) FROM metric_definitions WHERE tag = '{}' AND "
                                   "name = '{}'",
                                   m.info.tag, m.info.name)),
              1)
        << m.info.tag;
  }
}

TEST_F(RunRecord, ATunedTableThatChoseAConfigurationIsAnArtifactOfTheRunOnce) {
  store s(home_);
  const task_spec task = load_task(std::filesystem::path(BLASTER_SOURCE_DIR) / "tasks/rmsnorm");
  bench_report report = canonical_report();
  const std::string table = s.cas().put(R"({"1": {"VEC": 4}})");
  const tuned_choice choice{.file = "kernels/rmsnorm/tuned/C=64,device_name=X.json",
                            .sha256 = table,
                            .size_symbol = "B",
                            .size = 1,
                            .params = {{"VEC", "4"}}};
  variant_result a = passed(s, "a", false, 60.0);
  a.tuned = choice;
  variant_result b = passed(s, "b", false, 50.0);
  b.tuned = choice;  // two candidates chosen by one table: one artifact
  report.results = {passed(s, "init", true, 120.0), a, b};
  const std::int64_t run = s.begin_run("bench", "rmsnorm", "{}");
  record_run(s, run, task, report);
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM artifacts WHERE kind = 'tuned_table' AND name = "
                     "'tuned/C=64,device_name=X.json' AND sha256 = '" +
                         table + "'"),
            1);
}

}  // namespace
}  // namespace blaster
