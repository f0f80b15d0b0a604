// `verify --remeasure`'s judgement on reports put together by hand: which rows are claims, the
// draw, and each way a fresh run can hold, contradict or fail to reproduce a recorded claim.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "benchmarking/compare/remeasure.hpp"

namespace blaster {
namespace {

variant_result timed(const std::string& label, double time_us, bool baseline = false) {
  variant_result r;
  r.candidate = label.substr(0, label.find('['));
  r.label = label;
  r.file = "/recorded/checkout/kernels/rmsnorm/" + r.candidate + ".cu";
  r.baseline = baseline;
  r.status = "passed";
  r.time_us = time_us;
  r.max_noise = 0.002;
  r.session_spread = 0.004;
  r.session_medians_us = {time_us, time_us, time_us};
  r.source_sha256 = std::string(64, baseline ? 'b' : 'c');
  r.sources_sha256 = std::string(64, baseline ? 'B' : 'C');
  return r;
}

// A verdict over three sessions with the speedup interval [low, high].
void with_speedup(variant_result& r, double low, double high) {
  r.verdict = verdict_result{};
  r.verdict->speedup = {.low = low, .high = high, .point = (low + high) / 2};
  r.verdict->sessions = 3;
  r.speedup = (low + high) / 2;
}

bench_report run_of(double candidate_us, double low, double high) {
  bench_report report;
  report.task = "rmsnorm";
  report.timed_case = "canonical";
  report.timed_shape = "B=16 C=64 H=256 W=256";
  report.dtype = "f16";
  report.gpu = true;
  report.sessions = 3;
  report.device = cuda::device_properties{};
  report.device->name = "NVIDIA H100 80GB HBM3";
  report.run_id = 7;
  report.results = {timed("init", 120.0, true), timed("rmsnorm_fast[VEC=4]", candidate_us)};
  with_speedup(report.results[1], low, high);
  return report;
}

remeasured_claim judged(const bench_report& recorded, const bench_report& fresh) {
  remeasured_claim claim;
  judge_claim(recorded, recorded.results[1], fresh, claim);
  return claim;
}

TEST(Remeasure, TheClaimsAreTheTimedCandidatesNotTheBaselineNorTheRejectedOrScreenedOut) {
  bench_report a = run_of(70.0, 1.70, 1.72);
  variant_result rejected = timed("rmsnorm_broken", 50.0);
  rejected.status = "rejected";
  rejected.time_us.reset();
  variant_result screened = timed("rmsnorm_slow[VEC=1]", 90.0);
  screened.screened = true;
  a.results.push_back(rejected);
  a.results.push_back(screened);
  const bench_report b = run_of(60.0, 1.99, 2.01);
  const std::vector<claim_ref> claims =
      claims_of({{.source = "a", .report = a}, {.source = "b", .report = b}});
  ASSERT_EQ(claims.size(), 2U);
  EXPECT_EQ(claims[0].run, 0U);
  EXPECT_EQ(claims[0].result, 1U);
  EXPECT_EQ(claims[1].run, 1U);
  EXPECT_EQ(claims[1].result, 1U);
}

TEST(Remeasure, ADrawIsWithoutReplacementAndTheSameSeedDrawsTheSame) {
  const std::vector<std::size_t> first = draw_claims(50, 10, 42);
  EXPECT_EQ(first, draw_claims(50, 10, 42));
  EXPECT_NE(first, draw_claims(50, 10, 43));
  ASSERT_EQ(first.size(), 10U);
  EXPECT_EQ(std::set<std::size_t>(first.begin(), first.end()).size(), 10U);
  for (const std::size_t i : first) EXPECT_LT(i, 50U);
  // Asking for more than there are takes each once.
  const std::vector<std::size_t> all = draw_claims(3, 8, 1);
  EXPECT_EQ(std::set<std::size_t>(all.begin(), all.end()), (std::set<std::size_t>{0, 1, 2}));
}

TEST(Remeasure, AFreshRunWithinTheIntervalsHolds) {
  const bench_report recorded = run_of(70.0, 1.70, 1.72);
  const bench_report fresh = run_of(70.3, 1.69, 1.71);
  const remeasured_claim c = judged(recorded, fresh);
  EXPECT_EQ(c.status, claim_status::holds) << c.note;
  ASSERT_TRUE(c.time_ratio);
  EXPECT_LE(c.time_ratio->low, 1.0);
  EXPECT_GE(c.time_ratio->high, 1.0);
  EXPECT_EQ(c.fresh_run_id, 7);
}

// The forgery: a recorded time halved, the speedup doubled to match.
TEST(Remeasure, AnEditedTimeAndItsSpeedupDoNotHold) {
  const bench_report recorded = run_of(35.0, 3.40, 3.44);
  const bench_report fresh = run_of(70.0, 1.70, 1.72);
  const remeasured_claim c = judged(recorded, fresh);
  EXPECT_EQ(c.status, claim_status::does_not_hold);
  EXPECT_NE(c.note.find("excludes 1"), std::string::npos) << c.note;
  EXPECT_NE(c.note.find("speedup [1.700, 1.720] here vs [3.400, 3.440] recorded"),
            std::string::npos)
      << c.note;
}

// Both times scaled alike keep the speedup: the time alone gives it away.
TEST(Remeasure, BothTimesScaledAlikeAreCaughtByTheTime) {
  bench_report recorded = run_of(35.0, 1.70, 1.72);
  recorded.results[0] = timed("init", 60.0, true);
  const remeasured_claim c = judged(recorded, run_of(70.0, 1.70, 1.72));
  EXPECT_EQ(c.status, claim_status::does_not_hold);
  EXPECT_NE(c.note.find("time 70 us here vs 35 us recorded"), std::string::npos) << c.note;
  EXPECT_EQ(c.note.find("speedup"), std::string::npos) << c.note;
}

// A speedup edited alone: the times agree, the speedups' intervals do not.
TEST(Remeasure, AnEditedSpeedupAloneDoesNotHold) {
  const remeasured_claim c = judged(run_of(70.0, 2.40, 2.45), run_of(70.0, 1.70, 1.72));
  EXPECT_EQ(c.status, claim_status::does_not_hold);
  EXPECT_EQ(c.note.find("time "), std::string::npos) << c.note;
  EXPECT_NE(c.note.find("speedup"), std::string::npos) << c.note;
}

TEST(Remeasure, ACandidateRejectedHereDoesNotHold) {
  bench_report fresh = run_of(70.0, 1.70, 1.72);
  fresh.results[1].status = "rejected";
  fresh.results[1].reason = reason_code::wrong_result;
  fresh.results[1].message = "case odd: out[3] = 1, expected 2";
  fresh.results[1].time_us.reset();
  const remeasured_claim c = judged(run_of(70.0, 1.70, 1.72), fresh);
  EXPECT_EQ(c.status, claim_status::does_not_hold);
  EXPECT_NE(c.note.find("rejected here: wrong_result case odd"), std::string::npos) << c.note;
}

TEST(Remeasure, AnotherBaselineSharedHeaderModeOrGpuIsNotRemeasured) {
  const bench_report recorded = run_of(70.0, 1.70, 1.72);
  auto note_of = [&](const bench_report& fresh) {
    const remeasured_claim c = judged(recorded, fresh);
    EXPECT_EQ(c.status, claim_status::not_remeasured);
    return c.note;
  };
  bench_report baseline = run_of(70.0, 1.70, 1.72);
  baseline.results[0].source_sha256 = std::string(64, 'd');
  EXPECT_NE(note_of(baseline).find("baseline"), std::string::npos);

  bench_report header = run_of(70.0, 1.70, 1.72);
  header.results[1].sources_sha256 = std::string(64, 'e');
  EXPECT_NE(note_of(header).find("shared headers"), std::string::npos);

  bench_report mode = run_of(70.0, 1.70, 1.72);
  mode.timing.mode = timing_mode::cold;
  EXPECT_NE(note_of(mode).find("mode cold here, hot recorded"), std::string::npos) << note_of(mode);

  bench_report gpu = run_of(70.0, 1.70, 1.72);
  gpu.device->name = "NVIDIA H200";
  EXPECT_NE(note_of(gpu).find("GPU NVIDIA H200 here"), std::string::npos) << note_of(gpu);

  bench_report missing = run_of(70.0, 1.70, 1.72);
  missing.results[1].label = "rmsnorm_fast[VEC=8]";
  EXPECT_NE(note_of(missing).find("no variant rmsnorm_fast[VEC=4]"), std::string::npos);

  bench_report no_gpu = run_of(70.0, 1.70, 1.72);
  no_gpu.gpu = false;
  no_gpu.gpu_unavailable = "no CUDA driver";
  EXPECT_NE(note_of(no_gpu).find("no CUDA driver"), std::string::npos);
}

// One session's bootstrap is no interval: the time alone decides, and the claim says so.
TEST(Remeasure, ASingleSessionComparesTheTimeAlone) {
  bench_report recorded = run_of(70.0, 1.70, 1.72);
  recorded.results[1].verdict->sessions = 1;
  const remeasured_claim c = judged(recorded, run_of(70.1, 1.10, 1.12));
  EXPECT_EQ(c.status, claim_status::holds);
  EXPECT_FALSE(c.recorded_speedup);
  EXPECT_EQ(c.note, "speedup not compared: one side has a single session");
}

}  // namespace
}  // namespace blaster
