#include "benchmarking/statistics/verdict.hpp"

#include <cmath>
#include <cstddef>

#include <fmt/format.h>

#include "core/error.hpp"

namespace blaster {
namespace {

void require_run(std::span<const double> medians, std::string_view what) {
  if (medians.empty()) BLASTER_INPUT_ERROR("the A/A self-check needs {}: it is empty", what);
  for (std::size_t i = 0; i < medians.size(); ++i) {
    if (!(medians[i] > 0.0) || !std::isfinite(medians[i])) {
      BLASTER_INPUT_ERROR("{}[{}] is {}; session medians must be positive and finite", what, i,
                          medians[i]);
    }
  }
}

std::string percent(double fraction) { return fmt::format("{:.2f}%", fraction * 100.0); }

}  // namespace

std::string_view to_string(verdict v) {
  switch (v) {
    case verdict::improved:
      return "improved";
    case verdict::no_improvement:
      return "no_improvement";
    case verdict::inconclusive:
      return "inconclusive";
  }
  return "unknown";
}

std::optional<verdict> parse_verdict(std::string_view name) {
  for (const verdict v : {verdict::improved, verdict::no_improvement, verdict::inconclusive}) {
    if (to_string(v) == name) return v;
  }
  return std::nullopt;
}

verdict_result judge(const session_comparison& comparison, const verdict_rules& rules) {
  if (rules.min_sessions < 1) {
    BLASTER_INPUT_ERROR("min_sessions is {}; it must be at least 1", rules.min_sessions);
  }
  if (!std::isfinite(rules.max_spread) || rules.max_spread < 0.0) {
    BLASTER_INPUT_ERROR("max_spread {} must be a finite fraction, 0 or more (0.05 is 5%)",
                        rules.max_spread);
  }
  const auto& baseline = comparison.baseline_medians;
  const auto& candidate = comparison.candidate_medians;

  verdict_result r;
  // Validates the sizes and values before anything else reads them.
  r.speedup = bootstrap_speedup(baseline, candidate, comparison.seed);
  r.sessions = static_cast<int>(baseline.size());
  r.baseline_spread = spread(baseline);
  r.candidate_spread = spread(candidate);
  r.every_session_faster = true;
  int first_not_faster = -1;
  for (std::size_t i = 0; i < baseline.size(); ++i) {
    if (!(candidate[i] < baseline[i])) {
      r.every_session_faster = false;
      first_not_faster = static_cast<int>(i);
      break;
    }
  }

  const std::string interval_text =
      fmt::format("95% interval of the speedup [{:.4f}, {:.4f}]", r.speedup.low, r.speedup.high);
  const bool baseline_spread_ok = r.baseline_spread <= rules.max_spread;
  const bool candidate_spread_ok = r.candidate_spread <= rules.max_spread;

  if (r.sessions < rules.min_sessions) {
    r.v = verdict::inconclusive;
    r.why = fmt::format("Inconclusive: {} sessions, fewer than the {} a verdict needs.", r.sessions,
                        rules.min_sessions);
  } else if (!baseline_spread_ok || !candidate_spread_ok) {
    r.v = verdict::inconclusive;
    const std::string sides =
        !baseline_spread_ok && !candidate_spread_ok
            ? fmt::format(
                  "the baseline's spread across sessions ({}) and "
                  "the candidate's ({}) exceed",
                  percent(r.baseline_spread), percent(r.candidate_spread))
        : !baseline_spread_ok ? fmt::format("the baseline's spread across sessions ({}) exceeds",
                                            percent(r.baseline_spread))
                              : fmt::format("the candidate's spread across sessions ({}) exceeds",
                                            percent(r.candidate_spread));
    r.why = fmt::format("Inconclusive: {} the {} allowed.", sides, percent(rules.max_spread));
  } else if (!(r.speedup.low > 1.0)) {
    r.v = verdict::no_improvement;
    r.why = fmt::format("No improvement: the {} does not lie above 1.0.", interval_text);
  } else if (!r.every_session_faster) {
    r.v = verdict::no_improvement;
    r.why = fmt::format(
        "No improvement: in session {} of {} the candidate ({}) was not faster than the baseline "
        "({}).",
        first_not_faster + 1, r.sessions, candidate[static_cast<std::size_t>(first_not_faster)],
        baseline[static_cast<std::size_t>(first_not_faster)]);
  } else {
    r.v = verdict::improved;
    r.why = fmt::format(
        "Improved: over {} sessions the {} lies above 1.0, every session was faster and both "
        "spreads are within {}.",
        r.sessions, interval_text, percent(rules.max_spread));
  }
  return r;
}

aa_check self_check(std::span<const double> first_medians, std::span<const double> second_medians,
                    double bound) {
  require_run(first_medians, "first_medians");
  require_run(second_medians, "second_medians");
  if (!(bound >= 0.0) || !std::isfinite(bound)) {
    BLASTER_INPUT_ERROR("the A/A bound {} must be a finite fraction, 0 or more (0.01 is 1%)",
                        bound);
  }
  aa_check out;
  out.ratio = median(first_medians) / median(second_medians);
  out.bound = bound;
  out.within = std::abs(out.ratio - 1.0) <= bound;
  return out;
}


nlohmann::json to_json(const verdict_result& v) {
  return {{"verdict", to_string(v.v)},
          {"speedup", v.speedup.point},
          {"speedup_low", v.speedup.low},
          {"speedup_high", v.speedup.high},
          {"baseline_spread", v.baseline_spread},
          {"candidate_spread", v.candidate_spread},
          {"sessions", v.sessions},
          {"every_session_faster", v.every_session_faster},
          {"why", v.why}};
}

// Reports of the previous release kept no spreads here: they read as 0.
verdict_result verdict_result_from_json(const nlohmann::json& j) {
  const auto name = j.at("verdict").get<std::string>();
  const auto v = parse_verdict(name);
  if (!v) BLASTER_INPUT_ERROR("verdict \"{}\" is unknown", name);
  return {.v = *v,
          .speedup = {.low = j.at("speedup_low").get<double>(),
                      .high = j.at("speedup_high").get<double>(),
                      .point = j.at("speedup").get<double>()},
          .baseline_spread = j.value("baseline_spread", 0.0),
          .candidate_spread = j.value("candidate_spread", 0.0),
          .sessions = j.at("sessions").get<int>(),
          .every_session_faster = j.at("every_session_faster").get<bool>(),
          .why = j.at("why").get<std::string>()};
}

nlohmann::json to_json(const aa_check& a) {
  return {{"ratio", a.ratio}, {"within", a.within}, {"bound", a.bound}};
}

aa_check aa_check_from_json(const nlohmann::json& j) {
  return {.ratio = j.at("ratio").get<double>(),
          .within = j.at("within").get<bool>(),
          .bound = j.at("bound").get<double>()};
}

}  // namespace blaster
