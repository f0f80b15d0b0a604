// Screening between a bench's first session and the rest: the baseline, its A/A twin and the
// fastest candidates go on; the others keep the one session they had, marked screened.
#include <gtest/gtest.h>

#include "benchmarking/runner/detail/screening.hpp"

namespace blaster {
namespace {

variant_result timed(const std::string& label, double first_session_us, bool baseline = false) {
  variant_result r;
  r.label = label;
  r.baseline = baseline;
  r.status = "compiled";
  r.session_medians_us = {first_session_us};
  return r;
}

TEST(Screening, TheBaselineTheTwinAndTheFastestGoOn) {
  bench_report report;
  report.results = {timed("init", 100.0, /*baseline=*/true), timed("a", 50.0), timed("b", 40.0),
                    timed("c", 60.0), timed("d", 45.0)};
  report.results[3].status = "rejected";  // rejected in session 1: stays out of the ranking
  const std::vector<std::size_t> survivors = {0, 1, 2, 3, 4};
  std::vector<std::ptrdiff_t> order = {0, 1, 2, 3, 4, -1};
  screen(2, report, survivors, order);
  // b (40) and d (45) are the two fastest; a (50) is screened; c stays, rejected.
  EXPECT_EQ(order, (std::vector<std::ptrdiff_t>{0, 2, 3, 4, -1}));
  EXPECT_TRUE(report.results[1].screened);
  EXPECT_FALSE(report.results[2].screened);
  EXPECT_FALSE(report.results[4].screened);
  EXPECT_FALSE(report.results[0].screened);
}

TEST(Screening, ARankGivenForEachResultOrdersTheCandidates) {
  // Screened on two GPUs: a and c on one whose baseline took 100 us, b and d on one at 80 us.
  bench_report report;
  report.results = {timed("init", 100.0, /*baseline=*/true), timed("a", 50.0), timed("b", 44.0),
                    timed("c", 60.0), timed("d", 36.0)};
  const std::vector<double> baseline_us = {100.0, 100.0, 80.0, 100.0, 80.0};
  std::vector<std::ptrdiff_t> order = {0, 1, 2, 3, 4, -1};
  screen(2, report, {0, 1, 2, 3, 4}, order, [&](std::size_t result) {
    return report.results[result].session_medians_us[0] / baseline_us[result];
  });
  // Over their own GPU's baseline: d 0.45, a 0.50, b 0.55, c 0.60. By time alone b (44) would
  // have gone on in a's place.
  EXPECT_EQ(order, (std::vector<std::ptrdiff_t>{0, 1, 4, -1}));
  EXPECT_TRUE(report.results[2].screened);
  EXPECT_TRUE(report.results[3].screened);
}

TEST(Screening, NothingIsScreenedWhenNoMoreCandidatesThanKept) {
  bench_report report;
  report.results = {timed("init", 100.0, /*baseline=*/true), timed("a", 50.0), timed("b", 40.0)};
  std::vector<std::ptrdiff_t> order = {0, 1, 2, -1};
  screen(2, report, {0, 1, 2}, order);
  EXPECT_EQ(order, (std::vector<std::ptrdiff_t>{0, 1, 2, -1}));
  EXPECT_FALSE(report.results[1].screened);
}

TEST(Screening, ACandidateToKeepGoesOnWhateverItsRank) {
  bench_report report;
  report.results = {timed("init", 100.0, /*baseline=*/true), timed("a", 50.0), timed("b", 40.0),
                    timed("c", 90.0), timed("d", 45.0)};
  std::vector<std::ptrdiff_t> order = {0, 1, 2, 3, 4, -1};
  screen(1, report, {0, 1, 2, 3, 4}, order, {}, [](std::size_t result) { return result == 3; });
  // b is the fastest; c, the slowest, is kept too; a and d are screened.
  EXPECT_EQ(order, (std::vector<std::ptrdiff_t>{0, 2, 3, -1}));
  EXPECT_FALSE(report.results[3].screened);
  EXPECT_TRUE(report.results[1].screened);
  EXPECT_TRUE(report.results[4].screened);
}

}  // namespace
}  // namespace blaster
