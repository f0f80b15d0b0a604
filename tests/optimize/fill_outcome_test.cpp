// What a bench report of one candidate becomes as a loop step: the reward is an interval's low
// end over the reward protocol's sessions, which one session cannot give, and a step without a
// speedup says why.
#include <gtest/gtest.h>

#include "benchmarking/report/bench_report.hpp"
#include "optimize/attempt.hpp"
#include "optimize/bench_evaluator.hpp"

namespace blaster {
namespace {

variant_result timed(bool baseline, std::vector<double> medians_us) {
  variant_result r;
  r.baseline = baseline;
  r.label = baseline ? "init" : "candidate[VEC=4]";
  r.status = "passed";
  r.session_medians_us = std::move(medians_us);
  r.time_us = r.session_medians_us.front();
  return r;
}

// A report as bench_runner leaves it: the speedup of the same run, and the verdict over the
// sessions the two sides share.
bench_report report_of(const std::vector<double>& baseline_us,
                       const std::vector<double>& candidate_us) {
  bench_report report;
  report.results = {timed(true, baseline_us), timed(false, candidate_us)};
  variant_result& c = report.results[1];
  c.speedup = baseline_us.front() / candidate_us.front();
  c.verdict = judge(session_comparison{
      .baseline_medians = baseline_us, .candidate_medians = candidate_us, .seed = 7});
  return report;
}

TEST(FillOutcome, OneSessionGivesNoIntervalAndNoReward) {
  attempt a;
  fill_outcome(report_of({100.0}, {50.0}), a);
  EXPECT_EQ(a.reason, "");
  ASSERT_TRUE(a.speedup);
  EXPECT_DOUBLE_EQ(*a.speedup, 2.0);
  EXPECT_FALSE(a.speedup_low) << "one session's bootstrap is the point estimate itself";
  EXPECT_FALSE(a.speedup_high);
  EXPECT_EQ(a.reward, 0.0);
}

TEST(FillOutcome, TwoSessionsGiveTheIntervalsLowEndAsTheReward) {
  attempt a;
  fill_outcome(report_of({100.0, 102.0}, {50.0, 49.0}), a, {}, /*reward_sessions=*/2);
  ASSERT_TRUE(a.speedup_low && a.speedup_high);
  EXPECT_LE(*a.speedup_low, *a.speedup_high);
  EXPECT_NEAR(*a.speedup_low, 2.0, 1e-9);  // the lower of the sessions' ratios 2.0 and 2.08
  EXPECT_EQ(a.reward, *a.speedup_low);
  EXPECT_EQ(a.reward_sessions, 2);
}

// The reward's protocol is the session's: a run of fewer sessions than it gives no reward, and
// a run of more is rewarded over the protocol's first sessions only.
TEST(FillOutcome, TheRewardIsDrawnFromTheProtocolsSessionsOnly) {
  attempt short_run;
  fill_outcome(report_of({100.0, 102.0}, {50.0, 49.0}), short_run, {}, /*reward_sessions=*/3);
  EXPECT_TRUE(short_run.speedup_low) << "the interval over the sessions run is still reported";
  EXPECT_EQ(short_run.reward, 0.0);

  attempt long_run;
  const std::vector<double> baseline = {100.0, 102.0, 98.0, 100.0, 101.0};
  fill_outcome(report_of(baseline, {50.0, 49.0, 51.0, 20.0, 20.0}), long_run, {}, 3);
  attempt first_three;
  fill_outcome(report_of({100.0, 102.0, 98.0}, {50.0, 49.0, 51.0}), first_three, {}, 3);
  EXPECT_GT(long_run.reward, 1.0);
  EXPECT_EQ(long_run.reward, first_three.reward) << "the fourth and fifth sessions do not count";
}

TEST(FillOutcome, ACandidateThatPassedBesideARejectedBaselineSaysWhyItHasNoSpeedup) {
  bench_report report;
  report.results = {timed(true, {100.0}), timed(false, {50.0})};
  variant_result& b = report.results[0];
  b.status = "rejected";
  b.reason = reason_code::timeout;
  b.message = "ran past its deadline";
  b.time_us.reset();
  attempt a;
  fill_outcome(report, a);
  EXPECT_EQ(a.reason, "") << "the candidate itself passed";
  EXPECT_FALSE(a.speedup);
  EXPECT_EQ(a.reward, 0.0);
  EXPECT_NE(a.message.find("baseline was rejected"), std::string::npos) << a.message;
  EXPECT_NE(a.message.find("timeout"), std::string::npos) << a.message;
}

}  // namespace
}  // namespace blaster
