#pragma once

// Two sets of runs compared variant by variant, as nvbench_compare compares two JSON outputs:
// whether each variant got faster, slower or stayed the same from A to B, judged from the
// intervals each run's own noise gives its time, and never across a GPU, shape, dtype, timing
// mode or protocol that differ unless asked.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "benchmarking/report/bench_report.hpp"

namespace blaster {

// One run's report and where it was read from ("HOME run 12", a bundle's folder).
struct loaded_run {
  std::string source;
  bench_report report;
};

// The statistics in words, for --help and the table's legend.
inline constexpr std::string_view comparison_statistics =
    "Each side's time t is its median of session medians, with the relative uncertainty u = "
    "max(noise, spread, A/A): the noisiest session's stddev over mean, the spread of the session "
    "medians (max/min - 1), or how far its run's A/A self-check (the baseline timed again in "
    "fresh processes) lies from 1, whichever is largest; its interval is [t(1-u), t(1+u)]. The "
    "ratio r = tB/tA has the interval [r(1-uB)/(1+uA), r(1+uB)/(1-uA)]. With the threshold tau: "
    "SLOW when the interval's low end is above 1 and r > 1+tau; FAST when its high end is below 1 "
    "and r < 1-tau; SAME when the whole interval lies within [1-tau, 1+tau]; INCONCLUSIVE "
    "otherwise.";

enum class comparison_status {
  fast,          // B is faster: the whole interval of the ratio lies below 1, beyond the threshold
  slow,          // B is slower: the whole interval lies above 1, beyond the threshold
  same,          // the whole interval lies within the threshold of 1
  inconclusive,  // the interval is too wide to say any of those
  mismatch,      // refused: GPU, shape, dtype, mode or protocol differ (see --allow-mismatch)
  only_a,        // the variant is in A only
  only_b,        // the variant is in B only
  rejected,      // passed in A, rejected in B: a regression
  fixed,         // rejected in A, passed in B
  untimed,       // not timed on both sides (rejected in both, compiled without a GPU)
};

std::string_view to_string(comparison_status status);  // "FAST", "ONLY_A", ...
// SLOW and REJECTED: what makes `blaster compare` exit with 1.
bool is_regression(comparison_status status);

// The relative uncertainty of a time: its noisiest session's stddev over mean, the spread of its
// session medians (max/min - 1), or |A/A - 1| of its run, whichever is largest. A drift across
// sessions widens the interval as much as the noise within one does; and a run of one session
// has no spread, but its A/A self-check shows how far a fresh process moves the same kernel.
double relative_uncertainty(const variant_result& result, const std::optional<aa_check>& aa);

// r = tB / tA with the interval [r (1 - uB) / (1 + uA), r (1 + uB) / (1 - uA)]: the least and
// the most ratio that times within [t (1 - u), t (1 + u)] on each side allow. An uncertainty of
// 1 or more leaves the high end unbounded (infinity).
struct ratio_interval {
  double ratio = 0.0;
  double low = 0.0;
  double high = 0.0;
};
ratio_interval ratio_of(double a_us, double a_uncertainty, double b_us, double b_uncertainty);

// With tau the threshold (0.02 is 2%): SLOW when low > 1 and r > 1 + tau; FAST when high < 1
// and r < 1 - tau; SAME when [low, high] lies within [1 - tau, 1 + tau]; else INCONCLUSIVE.
comparison_status classify(const ratio_interval& ratio, double threshold);

// One way in which the two runs of a pair differ: "GPU", "NVIDIA H200", "NVIDIA H100".
struct key_difference {
  std::string what{};  // GPU, shape, dtype, mode, or a protocol option such as "sessions"
  std::string a{};
  std::string b{};
};

// Where two runs' numbers do not mean the same thing: the GPU model, the timed case's shape and
// dtype, the timing mode, and the protocol (the timing options that change what a number
// means, and the number of sessions).
std::vector<key_difference> key_differences(const bench_report& a, const bench_report& b);

struct comparison_options {
  double threshold = 0.02;      // tau: 0.02 is 2%
  bool allow_mismatch = false;  // compare pairs whose key differs, and mark them
};

// Members default to empty so that designated initializers may name only what they set.
struct comparison_row {
  std::string task{};
  std::string case_name{};
  std::string variant{};
  comparison_status status = comparison_status::untimed;
  std::optional<double> a_us{};  // [microseconds]
  std::optional<double> b_us{};  // [microseconds]
  std::optional<ratio_interval> ratio{};
  std::vector<key_difference> differences{};  // the pair's runs differ so (refused, or marked)
  std::string note{};  // what differs, why nothing was compared, a rejection's reason
  std::string a_source{};
  std::string b_source{};
};

struct run_comparison {
  std::vector<comparison_row> rows;  // in A's order, then what only B holds
  std::vector<std::string> notes;
  comparison_options options;
  // Any SLOW or REJECTED row.
  bool regressed() const;
  std::size_t count(comparison_status status) const;
};

// Pairs the results of A and B by (task, case, variant label) and classifies each pair. A side
// that holds one key twice (two runs of the same task and case) is an input_error naming both
// runs.
run_comparison compare_runs(const std::vector<loaded_run>& a, const std::vector<loaded_run>& b,
                            const comparison_options& options);

}  // namespace blaster
