#pragma once

// Two cards against each other. For each case measured on both, the ratio of the two times
// beside the ratio of the two cards' measured ceilings for the case's bound: a kernel that
// reaches the same share of its ceiling on both cards takes times in the ratio of the ceilings.
// A case whose time ratio departs from its ceiling ratio by more than the intervals allow is
// either a kernel tuned for one card (then `tune` should be run for the other) or a measurement
// problem on one of them.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarking/compare/run_comparison.hpp"
#include "profiling/diagnosis.hpp"

namespace blaster {

// The statistics in words, for --help, the table's legend and the report.
inline constexpr std::string_view card_comparison_statistics =
    "Each case is timed by its best candidate on each card (the portfolio's rule: an improvement "
    "the verdict confirms, then the largest speedup), with the interval compare gives a time. "
    "The case's bound picks the ceiling: launch-bound where its time is within the launch-bound "
    "factor of the empty kernel's on either card or it is timed in graph mode (the launch floor "
    "of its mode); else the counters' diagnosis where both cards that have one agree on "
    "bandwidth or compute; else the roofline (the matrix rate where the case is nearer it than "
    "its memory floor, on either card, else the memory ceiling). The memory ceiling is the one of "
    "the case's mix of bytes read and written and of where its data lives (copy, read, write, L2), "
    "as its roofline floor used it, or the copy bandwidth where a run recorded nothing more. The "
    "ceilings' ratio is written as the time ratio it predicts (A's rate over B's, or B's launch "
    "floor over A's), with the interval of the ceilings' own spreads. The departure d is the time "
    "ratio over the ceilings' ratio, with the interval both intervals allow: DEPARTS when that "
    "whole interval lies beyond tau of 1 (flagged), AGREES when it lies within tau of 1, "
    "INCONCLUSIVE otherwise.";

enum class card_agreement {
  agrees,        // the time ratio is the ceilings' ratio, within tau
  departs,       // beyond tau even at the ends of the intervals: flagged
  inconclusive,  // the intervals are too wide to say either
  not_compared,  // shape, dtype or mode differ, no candidate passed, or no ceiling recorded
};
std::string_view to_string(card_agreement status);  // "AGREES", "DEPARTS", ...
std::optional<card_agreement> card_agreement_from_string(std::string_view text);

// One card's numbers for a case.
struct card_side {
  std::string source{};      // the run's bundle folder, or "HOME run 12"
  std::string variant{};     // the best candidate's label
  std::string file{};        // its candidate file, for the hint's `tune` line
  double time_us = 0.0;      // [microseconds] the median of its session medians
  double uncertainty = 0.0;  // relative, as compare takes it
  std::string ceiling{};  // "copy bandwidth", "L2 bandwidth", "matrix rate", "graph launch floor"
  double ceiling_value = 0.0;        // [bytes/s], [flop/s] or [microseconds] for a launch floor
  double ceiling_uncertainty = 0.0;  // relative: the ceiling's own spread (0 where unrecorded)
  std::string diagnosis{};           // the counters' one line, or empty where none were taken
  std::optional<double> time_over_floor{};  // the time over its roofline floor
  bool tuned = false;  // a tuned table chose the variant's params for this case
};

struct card_case {
  std::string task{};
  std::string case_name{};
  std::string shape{};
  std::string dtype{};
  std::string mode{};
  card_agreement status = card_agreement::not_compared;
  std::optional<bound_by> bound{};
  std::string bound_from{};  // "launch floor", "counters", "roofline"
  std::optional<card_side> a{};
  std::optional<card_side> b{};
  std::optional<ratio_interval> time_ratio{};     // tB / tA
  std::optional<ratio_interval> ceiling_ratio{};  // the time ratio the ceilings predict
  std::optional<ratio_interval> departure{};      // time ratio over ceiling ratio
  std::string note{};  // why not compared, or which card lags its ceilings and by how much
  std::string hint{};  // a DEPARTS case: tune on the other card, or what to measure again
};

struct card_comparison_options {
  double threshold = 0.10;  // tau: 0.10 is 10%
};

struct card_comparison {
  std::string a_card{};  // the GPU model of A's runs, "NVIDIA H200"
  std::string b_card{};
  std::string a_source{};  // as the user named each side
  std::string b_source{};
  double threshold = 0.10;
  std::vector<card_case> cases{};     // every case of A that B also has, in A's order
  std::vector<std::string> only_a{};  // "task case" measured on A only
  std::vector<std::string> only_b{};
  [[nodiscard]] std::size_t count(card_agreement status) const;
};

// Pairs A's and B's runs by task and case and compares each pair. Each side must hold runs of
// one GPU model, the two models must differ, and they must share a case; each is an input_error
// that names the sides and says what to give instead, as is a side that holds one case twice.
card_comparison compare_cards(const std::vector<loaded_run>& a, const std::vector<loaded_run>& b,
                              const std::string& a_source, const std::string& b_source,
                              const card_comparison_options& options = {});

nlohmann::json to_json(const card_comparison& c);
card_comparison card_comparison_from_json(const nlohmann::json& j);

}  // namespace blaster
