#include "benchmarking/statistics/verdict.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace blaster {

// Failures then print the verdict's name, not its bytes.
void PrintTo(verdict v, std::ostream* os) { *os << to_string(v); }

namespace {

// Five sessions, the candidate about 10% faster in each, with 1% jitter: clean evidence.
session_comparison clean_speedup() {
  return {.baseline_medians = {100.0, 101.0, 99.0, 100.5, 99.5},
          .candidate_medians = {91.8, 90.9, 90.5, 90.9, 90.4},
          .seed = 42};
}

bool mentions(const std::string& text, const std::string& word) {
  return text.find(word) != std::string::npos;
}

TEST(Verdict, Names) {
  EXPECT_EQ(to_string(verdict::improved), "improved");
  EXPECT_EQ(to_string(verdict::no_improvement), "no_improvement");
  EXPECT_EQ(to_string(verdict::inconclusive), "inconclusive");
}

TEST(Verdict, CleanSpeedupInEverySessionIsImproved) {
  const verdict_result r = judge(clean_speedup());
  EXPECT_EQ(r.v, verdict::improved) << r.why;
  EXPECT_EQ(r.sessions, 5);
  EXPECT_TRUE(r.every_session_faster);
  EXPECT_GT(r.speedup.low, 1.0);
  EXPECT_DOUBLE_EQ(r.speedup.point, 100.0 / 90.9);
  EXPECT_DOUBLE_EQ(r.baseline_spread, 101.0 / 99.0 - 1.0);
  EXPECT_DOUBLE_EQ(r.candidate_spread, 91.8 / 90.4 - 1.0);
  EXPECT_TRUE(mentions(r.why, "Improved")) << r.why;
}

TEST(Verdict, TheSeedMakesTheVerdictReproducible) {
  const verdict_result a = judge(clean_speedup());
  const verdict_result b = judge(clean_speedup());
  EXPECT_EQ(a.speedup.low, b.speedup.low);
  EXPECT_EQ(a.speedup.high, b.speedup.high);
  EXPECT_EQ(a.why, b.why);
}

TEST(Verdict, TooFewSessionsAreInconclusiveHoweverClean) {
  session_comparison c = clean_speedup();
  c.baseline_medians.pop_back();
  c.candidate_medians.pop_back();
  const verdict_result r = judge(c);
  EXPECT_EQ(r.v, verdict::inconclusive);
  EXPECT_EQ(r.sessions, 4);
  EXPECT_GT(r.speedup.low, 1.0) << "the interval alone would have passed";
  EXPECT_TRUE(mentions(r.why, "fewer than the 5")) << r.why;

  EXPECT_EQ(judge(c, {.min_sessions = 4}).v, verdict::improved);
}

TEST(Verdict, BaselineSpreadOverTheLimitIsInconclusive) {
  session_comparison c = clean_speedup();
  c.baseline_medians[1] = 106.0;  // 106 / 99 - 1 = 7.1%
  const verdict_result r = judge(c);
  EXPECT_EQ(r.v, verdict::inconclusive);
  EXPECT_GT(r.baseline_spread, 0.05);
  EXPECT_LE(r.candidate_spread, 0.05);
  EXPECT_TRUE(mentions(r.why, "baseline's spread")) << r.why;
  EXPECT_FALSE(mentions(r.why, "candidate's")) << r.why;
}

TEST(Verdict, CandidateSpreadOverTheLimitIsInconclusive) {
  session_comparison c = clean_speedup();
  c.candidate_medians[0] = 95.5;  // still faster than 100, but 95.5 / 90.4 - 1 = 5.6%
  const verdict_result r = judge(c);
  EXPECT_EQ(r.v, verdict::inconclusive);
  EXPECT_TRUE(r.every_session_faster);
  EXPECT_LE(r.baseline_spread, 0.05);
  EXPECT_GT(r.candidate_spread, 0.05);
  EXPECT_TRUE(mentions(r.why, "candidate's spread")) << r.why;
}

TEST(Verdict, BothSpreadsOverTheLimitAreNamed) {
  session_comparison c = clean_speedup();
  c.baseline_medians[1] = 106.0;
  c.candidate_medians[0] = 95.5;
  const verdict_result r = judge(c);
  EXPECT_EQ(r.v, verdict::inconclusive);
  EXPECT_TRUE(mentions(r.why, "baseline's")) << r.why;
  EXPECT_TRUE(mentions(r.why, "candidate's")) << r.why;
}

// Powers of two keep max/min - 1 exact, so the rule is tested at its boundary, not near it.
session_comparison spreads_of_one_sixteenth(double baseline_max) {
  const std::vector<double> baseline = {1.0, baseline_max, 1.03125, 1.015625, 1.046875};
  std::vector<double> candidate;
  for (const double b : baseline) candidate.push_back(b * 0.875);
  return {.baseline_medians = baseline, .candidate_medians = candidate, .seed = 5};
}

TEST(Verdict, SpreadExactlyAtTheLimitIsAllowed) {
  const verdict_rules rules{.max_spread = 0.0625};
  const verdict_result at = judge(spreads_of_one_sixteenth(1.0625), rules);
  EXPECT_EQ(at.baseline_spread, 0.0625);
  EXPECT_EQ(at.candidate_spread, 0.0625);
  EXPECT_EQ(at.v, verdict::improved) << at.why;

  const verdict_result over = judge(spreads_of_one_sixteenth(std::nextafter(1.0625, 2.0)), rules);
  EXPECT_GT(over.baseline_spread, 0.0625);
  EXPECT_EQ(over.v, verdict::inconclusive) << over.why;
}

TEST(Verdict, IntervalReachingOneIsNoImprovement) {
  // Half the sessions faster, half slower: the interval straddles 1.0; the spreads are fine.
  const session_comparison c{.baseline_medians = {100.0, 100.4, 99.8, 100.2, 99.6},
                             .candidate_medians = {98.0, 102.0, 98.5, 101.5, 100.0},
                             .seed = 42};
  const verdict_result r = judge(c);
  EXPECT_EQ(r.v, verdict::no_improvement) << r.why;
  EXPECT_LE(r.speedup.low, 1.0);
  EXPECT_GT(r.speedup.high, 1.0);
  EXPECT_FALSE(r.every_session_faster);
  EXPECT_TRUE(mentions(r.why, "does not lie above 1.0")) << r.why;
}

TEST(Verdict, OneSlowerSessionIsNoImprovementEvenWithTheIntervalAboveOne) {
  // Ten sessions, nine 10% faster and one 1% slower: too rare in the resamples to pull the
  // interval down to 1.0, but the rule asks for every session.
  session_comparison c;
  c.seed = 11;
  for (int i = 0; i < 10; ++i) {
    const double base = 100.0 + 0.3 * i;
    c.baseline_medians.push_back(base);
    c.candidate_medians.push_back(i == 3 ? base * 1.01 : base / 1.1);
  }
  const verdict_result r = judge(c, {.max_spread = 0.2});
  EXPECT_GT(r.speedup.low, 1.0);
  EXPECT_FALSE(r.every_session_faster);
  EXPECT_EQ(r.v, verdict::no_improvement) << r.why;
  EXPECT_TRUE(mentions(r.why, "session 4 of 10")) << r.why;
}

TEST(Verdict, ATieIsNotFaster) {
  session_comparison c = clean_speedup();
  for (int i = 0; i < 5; ++i) {  // ten sessions: one tie is too rare to pull the interval to 1.0
    c.baseline_medians.push_back(c.baseline_medians[i]);
    c.candidate_medians.push_back(c.candidate_medians[i]);
  }
  c.candidate_medians[2] = c.baseline_medians[2];
  const verdict_result r = judge(c, {.max_spread = 0.2});  // the tie alone spreads 9.5%
  EXPECT_GT(r.speedup.low, 1.0);
  EXPECT_FALSE(r.every_session_faster);
  EXPECT_EQ(r.v, verdict::no_improvement) << r.why;
  EXPECT_TRUE(mentions(r.why, "session 3 of 10")) << r.why;
}

TEST(Verdict, RejectsMalformedInput) {
  session_comparison mismatched = clean_speedup();
  mismatched.candidate_medians.pop_back();
  EXPECT_THROW(judge(mismatched), input_error);
  EXPECT_THROW(judge(session_comparison{}), input_error);
  session_comparison negative = clean_speedup();
  negative.baseline_medians[0] = -1.0;
  EXPECT_THROW(judge(negative), input_error);
  EXPECT_THROW(judge(clean_speedup(), {.min_sessions = 0}), input_error);
  EXPECT_THROW(judge(clean_speedup(), {.max_spread = -0.01}), input_error);
}

TEST(Verdict, SelfCheckOfIdenticalRunsIsWithin) {
  const std::vector<double> run = {10.0, 10.1, 9.9, 10.05, 9.95};
  const aa_check check = self_check(run, run);
  EXPECT_EQ(check.ratio, 1.0);
  EXPECT_TRUE(check.within);
  EXPECT_EQ(check.bound, 0.01);
}

TEST(Verdict, SelfCheckComparesMediansOfRunsOfAnySize) {
  const std::vector<double> first = {10.2, 10.0, 10.1};
  const std::vector<double> second = {9.95, 10.05, 10.0, 10.2};  // median 10.025
  const aa_check check = self_check(first, second);
  EXPECT_DOUBLE_EQ(check.ratio, 10.1 / 10.025);
  EXPECT_TRUE(check.within);  // 0.75%

  const std::vector<double> drifted = {10.3, 10.2, 10.25};  // 2.5% above `first`'s median
  EXPECT_FALSE(self_check(drifted, first).within);
  EXPECT_FALSE(self_check(first, drifted).within) << "a slower first run counts as well";
  EXPECT_TRUE(self_check(drifted, first, 0.03).within);
}

TEST(Verdict, SelfCheckBoundIsInclusive) {
  const std::vector<double> one = {1.0};
  const std::vector<double> above = {1.0625};
  const std::vector<double> below = {0.9375};
  const std::vector<double> past = {std::nextafter(1.0625, 2.0)};
  EXPECT_TRUE(self_check(above, one, 0.0625).within);
  EXPECT_TRUE(self_check(below, one, 0.0625).within);
  EXPECT_FALSE(self_check(past, one, 0.0625).within);
}

TEST(Verdict, SelfCheckRejectsMalformedInput) {
  const std::vector<double> run = {1.0, 1.1};
  const std::vector<double> empty;
  const std::vector<double> with_zero = {1.0, 0.0};
  const std::vector<double> with_nan = {1.0, std::numeric_limits<double>::quiet_NaN()};
  EXPECT_THROW(self_check(run, empty), input_error);
  EXPECT_THROW(self_check(with_zero, run), input_error);
  EXPECT_THROW(self_check(run, with_nan), input_error);
  EXPECT_THROW(self_check(run, run, -0.01), input_error);
}

}  // namespace
}  // namespace blaster
