// blaster compare's statistics and matching on reports put together by hand: each status from
// the intervals, the refusal of pairs whose numbers mean different things, one-sided variants,
// and rejections.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "benchmarking/compare/comparison_table.hpp"
#include "benchmarking/compare/run_comparison.hpp"
#include "core/error.hpp"

namespace blaster {
namespace {

variant_result timed(const std::string& label, double time_us, double noise = 0.001,
                     double spread = 0.0) {
  variant_result r;
  r.candidate = label;
  r.label = label;
  r.baseline = label == "init";
  r.status = "passed";
  r.time_us = time_us;
  r.max_noise = noise;
  r.session_spread = spread;
  r.session_medians_us = {time_us, time_us, time_us, time_us, time_us};
  return r;
}

variant_result rejected(const std::string& label) {
  variant_result r;
  r.candidate = label;
  r.label = label;
  r.status = "rejected";
  r.reason = reason_code::wrong_result;
  r.message = "case odd: out[17] = 3.5, expected 1.25";
  return r;
}

bench_report report_of(std::vector<variant_result> results) {
  bench_report r;
  r.task = "rmsnorm";
  r.timed_case = "canonical";
  r.timed_shape = "B=16 C=64 H=256 W=256";
  r.dtype = "f16";
  r.sessions = 5;
  r.gpu = true;
  r.device = cuda::device_properties{.name = "NVIDIA H200", .uuid = "GPU-a", .compute_major = 9};
  r.results = std::move(results);
  return r;
}

std::vector<loaded_run> side(const bench_report& report, const std::string& source = "run") {
  return {loaded_run{.source = source, .report = report}};
}

run_comparison compare(const bench_report& a, const bench_report& b, double threshold = 0.02,
                       bool allow_mismatch = false) {
  return compare_runs(side(a, "A"), side(b, "B"),
                      {.threshold = threshold, .allow_mismatch = allow_mismatch});
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const bench_report base = report_of({timed("init", 120.0), timed("fast[VEC=4]", 70.0)});

TEST(RunComparison, TheIntervalOfTheRatioIsTheOneDocumented) {
  const ratio_interval x = ratio_of(100.0, 0.01, 200.0, 0.02);
  EXPECT_DOUBLE_EQ(x.ratio, 2.0);
  EXPECT_DOUBLE_EQ(x.low, 2.0 * 0.98 / 1.01);
  EXPECT_DOUBLE_EQ(x.high, 2.0 * 1.02 / 0.99);
  // The largest of the noise, the spread and the run's A/A deviation is a side's uncertainty.
  EXPECT_DOUBLE_EQ(relative_uncertainty(timed("x", 1.0, 0.004, 0.03), std::nullopt), 0.03);
  EXPECT_DOUBLE_EQ(relative_uncertainty(timed("x", 1.0, 0.04, 0.003), std::nullopt), 0.04);
  EXPECT_NEAR(relative_uncertainty(timed("x", 1.0, 0.004, 0.0), aa_check{.ratio = 0.9685}),
              0.0315, 1e-12);
  EXPECT_NEAR(relative_uncertainty(timed("x", 1.0, 0.004, 0.0), aa_check{.ratio = 1.02}), 0.02,
              1e-12);
  // An uncertainty of 100% leaves the ratio unbounded above: nothing can be said.
  const ratio_interval wild = ratio_of(100.0, 1.0, 100.0, 0.0);
  EXPECT_TRUE(std::isinf(wild.high));
  EXPECT_EQ(classify(wild, 0.02), comparison_status::inconclusive);
}

TEST(RunComparison, IdenticalRunsAreTheSameEverywhere) {
  const run_comparison c = compare(base, base);
  ASSERT_EQ(c.rows.size(), 2U);
  for (const auto& row : c.rows) {
    EXPECT_EQ(row.status, comparison_status::same) << row.variant;
    ASSERT_TRUE(row.ratio) << row.variant;
    EXPECT_DOUBLE_EQ(row.ratio->ratio, 1.0);
    EXPECT_LT(row.ratio->low, 1.0);
    EXPECT_GT(row.ratio->high, 1.0);
    EXPECT_TRUE(row.differences.empty());
  }
  EXPECT_FALSE(c.regressed());
}

// Two one-session runs of the same kernels on the H200: the baseline moved from 117.25 to
// 121.20 us between the processes while each session's noise was under 0.3%. The first run's
// A/A self-check (0.9685) had seen a fresh process move that far, so the pair is INCONCLUSIVE,
// not a regression; without the A/A it would have read SLOW.
TEST(RunComparison, AShiftTheRunsOwnAaCheckSawIsNoRegression) {
  bench_report a = report_of({timed("init", 117.25, 0.0027, 0.0)});
  const bench_report b = report_of({timed("init", 121.20, 0.0027, 0.0)});
  const run_comparison blind = compare(a, b);
  ASSERT_EQ(blind.rows.size(), 1U);
  EXPECT_EQ(blind.rows[0].status, comparison_status::slow);
  a.aa = aa_check{.ratio = 0.9685, .within = false, .bound = 0.01};
  const run_comparison seen = compare(a, b);
  ASSERT_EQ(seen.rows.size(), 1U);
  EXPECT_EQ(seen.rows[0].status, comparison_status::inconclusive);
  EXPECT_FALSE(seen.regressed());
}

TEST(RunComparison, TwiceAsSlowIsSlowAndARegression) {
  const run_comparison c =
      compare(base, report_of({timed("init", 120.0), timed("fast[VEC=4]", 140.0)}));
  ASSERT_EQ(c.rows.size(), 2U);
  EXPECT_EQ(c.rows[0].status, comparison_status::same);
  EXPECT_EQ(c.rows[1].status, comparison_status::slow);
  EXPECT_DOUBLE_EQ(c.rows[1].ratio->ratio, 2.0);
  EXPECT_GT(c.rows[1].ratio->low, 1.0);
  EXPECT_TRUE(c.regressed());
  EXPECT_EQ(c.count(comparison_status::slow), 1U);
}

TEST(RunComparison, TwiceAsFastIsFastAndNoRegression) {
  const run_comparison c =
      compare(base, report_of({timed("init", 60.0), timed("fast[VEC=4]", 35.0)}));
  for (const auto& row : c.rows) {
    EXPECT_EQ(row.status, comparison_status::fast) << row.variant;
    EXPECT_DOUBLE_EQ(row.ratio->ratio, 0.5);
    EXPECT_LT(row.ratio->high, 1.0);
  }
  EXPECT_FALSE(c.regressed());
}

TEST(RunComparison, ANoisyPairWhoseIntervalStraddlesTheThresholdIsInconclusive) {
  // 3% slower, beyond the 2% threshold, but each side is uncertain by 3%: the interval runs
  // from below 1 to above 1.02, so it is neither SLOW nor SAME.
  const run_comparison noisy =
      compare(report_of({timed("init", 100.0, 0.03)}), report_of({timed("init", 103.0, 0.03)}));
  ASSERT_EQ(noisy.rows.size(), 1U);
  EXPECT_EQ(noisy.rows[0].status, comparison_status::inconclusive);
  EXPECT_LT(noisy.rows[0].ratio->low, 1.0);
  EXPECT_GT(noisy.rows[0].ratio->high, 1.02);
  EXPECT_FALSE(noisy.regressed());
  // The same drift across sessions, with quiet sessions, widens the interval just as much.
  const run_comparison drifting = compare(report_of({timed("init", 100.0, 0.001, 0.03)}),
                                          report_of({timed("init", 103.0, 0.001, 0.03)}));
  EXPECT_EQ(drifting.rows[0].status, comparison_status::inconclusive);
  // Quiet on both sides, the same 3% is SLOW; and SAME under a 5% threshold.
  const bench_report quiet_a = report_of({timed("init", 100.0, 0.001)});
  const bench_report quiet_b = report_of({timed("init", 103.0, 0.001)});
  EXPECT_EQ(compare(quiet_a, quiet_b).rows[0].status, comparison_status::slow);
  EXPECT_EQ(compare(quiet_a, quiet_b, 0.05).rows[0].status, comparison_status::same);
  // 1% slower and quiet: within the threshold, SAME, never SLOW.
  EXPECT_EQ(compare(quiet_a, report_of({timed("init", 101.0, 0.001)})).rows[0].status,
            comparison_status::same);
}

struct mismatch_case {
  std::string what;  // as the note names it
  std::function<void(bench_report&)> change;
};

TEST(RunComparison, PairsWhoseNumbersMeanDifferentThingsAreRefusedUnlessAllowed) {
  const std::vector<mismatch_case> cases = {
      {"GPU NVIDIA H200 vs NVIDIA H100", [](bench_report& r) { r.device->name = "NVIDIA H100"; }},
      {"GPU NVIDIA H200 vs none", [](bench_report& r) { r.device.reset(); }},
      {"shape B=16 C=64 H=256 W=256 vs B=1 C=64 H=256 W=256",
       [](bench_report& r) { r.timed_shape = "B=1 C=64 H=256 W=256"; }},
      {"dtype f16 vs f32", [](bench_report& r) { r.dtype = "f32"; }},
      {"mode hot vs cold", [](bench_report& r) { r.timing.mode = timing_mode::cold; }},
      {"max_noise 0.005 vs 0.01", [](bench_report& r) { r.timing.max_noise = 0.01; }},
      {"sessions 5 vs 1", [](bench_report& r) { r.sessions = 1; }},
      {"target_sample_ms 1 vs 2", [](bench_report& r) { r.timing.target_sample_ms = 2.0; }},
      {"min_samples 10 vs 20", [](bench_report& r) { r.timing.min_samples = 20; }},
      {"max_samples 1000 vs 50", [](bench_report& r) { r.timing.max_samples = 50; }},
      {"rotate_buffers false vs true", [](bench_report& r) { r.timing.rotate_buffers = true; }},
      {"min_clock_fraction 0.75 vs 0.5",
       [](bench_report& r) { r.timing.min_clock_fraction = 0.5; }},
  };
  for (const auto& m : cases) {
    bench_report other = report_of({timed("init", 120.0), timed("fast[VEC=4]", 140.0)});
    m.change(other);
    const run_comparison refused = compare(base, other);
    for (const auto& row : refused.rows) {
      EXPECT_EQ(row.status, comparison_status::mismatch) << m.what;
      EXPECT_TRUE(contains(row.note, m.what)) << m.what << ": " << row.note;
      EXPECT_FALSE(row.ratio) << m.what;
    }
    EXPECT_FALSE(refused.regressed()) << "a refusal is not a regression: " << m.what;
    ASSERT_FALSE(refused.notes.empty()) << m.what;
    EXPECT_TRUE(contains(refused.notes[0], "--allow-mismatch")) << refused.notes[0];

    const run_comparison allowed = compare(base, other, 0.02, /*allow_mismatch=*/true);
    ASSERT_EQ(allowed.rows.size(), 2U);
    EXPECT_EQ(allowed.rows[1].status, comparison_status::slow) << m.what;
    for (const auto& row : allowed.rows) {
      EXPECT_TRUE(contains(row.note, "compared although " + m.what)) << row.note;
    }
    EXPECT_TRUE(allowed.regressed()) << m.what;
    ASSERT_FALSE(allowed.notes.empty()) << m.what;
    EXPECT_TRUE(contains(allowed.notes[0], "compared although the ")) << allowed.notes[0];
  }
  bench_report h100 = base;
  h100.device->name = "NVIDIA H100";
  EXPECT_TRUE(contains(compare(base, h100).notes.at(0), "GPUs differ"));
}

TEST(RunComparison, OptionsThatDoNotChangeANumberAreNoMismatch) {
  bench_report a = base;
  bench_report b = base;
  b.timing.budget_ms = 10000.0;  // a longer budget changes when sampling stops, not the number
  b.timing.warmup_launches = 10;
  b.device->uuid = "another H200";  // the model matters, not the card
  EXPECT_TRUE(key_differences(a, b).empty());
  // Cold mode times single launches: it has no sample length and does not rotate buffers.
  a.timing.mode = b.timing.mode = timing_mode::cold;
  b.timing.target_sample_ms = 5.0;
  b.timing.rotate_buffers = true;
  EXPECT_TRUE(key_differences(a, b).empty());
}

TEST(RunComparison, VariantsOnOneSideOnlyAreListedAndNoFailure) {
  const bench_report b = report_of({timed("init", 120.0), timed("new_kernel", 50.0)});
  const run_comparison c = compare(base, b);
  ASSERT_EQ(c.rows.size(), 3U);
  EXPECT_EQ(c.rows[0].status, comparison_status::same);
  EXPECT_EQ(c.rows[1].variant, "fast[VEC=4]");
  EXPECT_EQ(c.rows[1].status, comparison_status::only_a);
  EXPECT_EQ(c.rows[1].a_us, 70.0);
  EXPECT_FALSE(c.rows[1].b_us);
  EXPECT_EQ(c.rows[2].variant, "new_kernel");
  EXPECT_EQ(c.rows[2].status, comparison_status::only_b);
  EXPECT_EQ(c.rows[2].b_us, 50.0);
  EXPECT_FALSE(c.regressed());
  // Another case of the task is another key.
  bench_report large = base;
  large.timed_case = "large";
  const run_comparison cases = compare(base, large);
  EXPECT_EQ(cases.count(comparison_status::only_a), 2U);
  EXPECT_EQ(cases.count(comparison_status::only_b), 2U);
}

TEST(RunComparison, PassedThenRejectedIsARegressionWithItsReason) {
  const bench_report b = report_of({timed("init", 120.0), rejected("fast[VEC=4]")});
  const run_comparison c = compare(base, b);
  ASSERT_EQ(c.rows.size(), 2U);
  EXPECT_EQ(c.rows[1].status, comparison_status::rejected);
  EXPECT_TRUE(contains(c.rows[1].note, "wrong_result")) << c.rows[1].note;
  EXPECT_TRUE(contains(c.rows[1].note, "out[17] = 3.5")) << c.rows[1].note;
  EXPECT_TRUE(c.regressed());
  // The other way round it was fixed; rejected in both, nothing is timed.
  const run_comparison back = compare(b, base);
  EXPECT_EQ(back.rows[1].status, comparison_status::fixed);
  EXPECT_FALSE(back.regressed());
  const run_comparison neither = compare(b, b);
  EXPECT_EQ(neither.rows[1].status, comparison_status::untimed);
  EXPECT_FALSE(neither.regressed());
}

TEST(RunComparison, ASideThatHoldsOneKeyTwiceIsBadInput) {
  std::vector<loaded_run> two = side(base, "first");
  two.push_back({.source = "second", .report = base});
  try {
    static_cast<void>(compare_runs(two, side(base), {}));
    FAIL() << "two runs of one task and case were accepted on one side";
  } catch (const input_error& e) {
    EXPECT_TRUE(contains(e.what(), "first and second")) << e.what();
  }
}

TEST(RunComparison, TheTableCarriesEveryRowStatusAndNote) {
  bench_report b = report_of({timed("init", 120.0), timed("fast[VEC=4]", 140.0)});
  b.device->name = "NVIDIA H100";
  const run_comparison c = compare(base, b, 0.02, /*allow_mismatch=*/true);
  const result_table t = comparison_table(c, side(base, "home-a run 1"), side(b, "home-b run 4"));
  std::vector<std::string> tags;
  for (const auto& column : t.columns) tags.emplace_back(column.metric.tag);
  EXPECT_EQ(tags, (std::vector<std::string>{"task", "case", "variant", "a_time_us", "b_time_us",
                                            "ratio", "ratio_low", "ratio_high", "status", "note"}));
  ASSERT_EQ(t.rows.size(), 2U);
  EXPECT_EQ(std::get<std::string>(t.rows[1].cells[8]), "SLOW");
  EXPECT_DOUBLE_EQ(std::get<double>(t.rows[1].cells[5]), 2.0);
  EXPECT_TRUE(contains(std::get<std::string>(t.rows[1].cells[9]), "compared although GPU"));
  EXPECT_TRUE(contains(t.preamble.at(0), "home-a run 1"));
  EXPECT_TRUE(contains(t.preamble.at(1), "NVIDIA H100"));
  bool regression = false;
  bool gpus = false;
  for (const auto& note : t.notes) {
    regression = regression || contains(note, "REGRESSION: 1 SLOW");
    gpus = gpus || contains(note, "compared although the GPUs differ");
  }
  EXPECT_TRUE(regression);
  EXPECT_TRUE(gpus);
}

}  // namespace
}  // namespace blaster
