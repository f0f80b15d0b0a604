#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <optional>

#include <nlohmann/json.hpp>

#include "benchmarking/statistics/statistics.hpp"

namespace blaster {

// What the sessions say about a candidate against its baseline.
enum class verdict {
  improved,        // faster, and the evidence would convince a skeptic
  no_improvement,  // the sessions are clean enough to judge, and they do not show a speedup
  inconclusive,    // too few sessions, or too much spread across them, to judge at all
};

std::string_view to_string(verdict v);
std::optional<verdict> parse_verdict(std::string_view name);

// The per-session medians of one A/B comparison. Session i ran the baseline and the candidate
// back to back, so the two vectors pair by index. The seed drives the bootstrap and is recorded
// with the result so that anyone can recompute the interval.
struct session_comparison {
  std::vector<double> baseline_medians;   // [any time unit, the same for both]
  std::vector<double> candidate_medians;  // [the same unit]
  std::uint64_t seed = 0;
};

struct verdict_rules {
  int min_sessions = 5;
  double max_spread = 0.05;  // max/min - 1 of the session medians, per side; 0.05 is 5%
};

struct verdict_result {
  verdict v = verdict::inconclusive;
  interval speedup;  // median(baseline) / median(candidate), 95% paired bootstrap interval
  double baseline_spread = 0.0;   // max/min - 1 of the baseline's session medians
  double candidate_spread = 0.0;  // max/min - 1 of the candidate's session medians
  int sessions = 0;
  bool every_session_faster = false;  // candidate median < baseline median in every session
  std::string why;                    // one sentence: the rule that decided
};

// improved: sessions >= min_sessions, speedup.low > 1.0, every session faster, and both spreads
// <= max_spread. inconclusive: sessions < min_sessions, or either spread > max_spread.
// no_improvement: otherwise. Throws input_error where the two sides differ in size, are empty,
// or hold a median that is not positive and finite, or where the rules are malformed.
verdict_result judge(const session_comparison& comparison, const verdict_rules& rules = {});

// The A/A self-check: two runs of the same baseline must agree, or the machine is too noisy to
// judge anything on it. ratio = median(first) / median(second); within = |ratio - 1| <= bound.
struct aa_check {
  double ratio = 0.0;
  bool within = false;
  double bound = 0.0;  // 0.01 is 1%
};

// The runs may hold different numbers of sessions. Throws input_error for an empty run, a median
// that is not positive and finite, or a negative bound.
aa_check self_check(std::span<const double> first_medians, std::span<const double> second_medians,
                    double bound = 0.01);

nlohmann::json to_json(const verdict_result& v);
verdict_result verdict_result_from_json(const nlohmann::json& j);
nlohmann::json to_json(const aa_check& a);
aa_check aa_check_from_json(const nlohmann::json& j);

}  // namespace blaster
