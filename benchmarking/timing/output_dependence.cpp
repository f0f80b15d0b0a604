#include "benchmarking/timing/output_dependence.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "benchmarking/statistics/statistics.hpp"

namespace blaster {
namespace {

// Launches on inputs the kernel has not met, each alone and after different work, vary by a few
// percent; the device's clock resolution is about 0.5 us for CUPTI and a little more for events.
constexpr double relative_slack = 0.15;
constexpr double absolute_slack_us = 0.5;
// CUPTI's and the events' clocks, compared over one launch (time_phase's account() allows the
// same for a whole sample).
constexpr double clock_slack = 0.02;

}  // namespace

nlohmann::json to_json(const poisoned_launches& p) {
  return {{"source", p.source},
          {"control_us", p.control_us},
          {"poisoned_us", p.poisoned_us},
          {"control_event_us", p.control_event_us},
          {"poisoned_event_us", p.poisoned_event_us},
          {"hot_us", p.hot_us},
          {"back_to_back_us", p.back_to_back_us},
          {"paused_us", p.paused_us},
          {"pause_us", p.pause_us},
          {"reference_back_to_back_us", p.reference_back_to_back_us},
          {"reference_paused_us", p.reference_paused_us},
          {"reference_bytes", p.reference_bytes}};
}

poisoned_launches poisoned_launches_from_json(const nlohmann::json& j) {
  using times = std::vector<double>;
  return {.source = j.at("source").get<std::string>(),
          .control_us = j.at("control_us").get<times>(),
          .poisoned_us = j.at("poisoned_us").get<times>(),
          .control_event_us = j.value("control_event_us", times()),
          .poisoned_event_us = j.value("poisoned_event_us", times()),
          .hot_us = j.at("hot_us").get<double>(),
          .back_to_back_us = j.value("back_to_back_us", times()),
          .paused_us = j.value("paused_us", times()),
          .pause_us = j.value("pause_us", 0.0),
          .reference_back_to_back_us = j.value("reference_back_to_back_us", times()),
          .reference_paused_us = j.value("reference_paused_us", times()),
          .reference_bytes = j.value("reference_bytes", std::size_t{0})};
}

double one_launch_us(double event_us, double kernel_us, std::size_t seen, std::size_t planned) {
  const bool alone = seen == planned && planned > 0;
  return alone && kernel_us <= event_us * (1.0 + clock_slack) + absolute_slack_us ? kernel_us
                                                                                  : event_us;
}

namespace {

std::optional<interval> ratio_of(const std::vector<double>& numerators,
                                 const std::vector<double>& denominators) {
  if (numerators.size() != denominators.size() ||
      numerators.size() < static_cast<std::size_t>(pairs_for_an_interval(dependence_confidence))) {
    return std::nullopt;
  }
  const auto positive = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x) && x > 0.0; });
  };
  if (!positive(numerators) || !positive(denominators)) return std::nullopt;
  return median_ratio_interval(numerators, denominators, dependence_confidence);
}

std::string shown(const interval& i) {
  return fmt::format("{:.3f} [{:.3f}, {:.3f}]", i.point, i.low, i.high);
}

}  // namespace

std::optional<interval> output_ratio(const poisoned_launches& p) {
  return ratio_of(p.poisoned_us, p.control_us);
}

std::optional<interval> pause_ratio(const poisoned_launches& p) {
  return ratio_of(p.paused_us, p.back_to_back_us);
}

std::optional<interval> reference_pause_ratio(const poisoned_launches& p) {
  return ratio_of(p.reference_paused_us, p.reference_back_to_back_us);
}

std::optional<std::string> output_dependence(const poisoned_launches& p) {
  const double percent = 100.0 * dependence_confidence;
  if (const auto output = output_ratio(p); output && output->low > 1.0) {
    return fmt::format(
        "launches on freshly poisoned outputs took {:.2f} us, launches after the same write of "
        "what the last launch left {:.2f} us ({}, medians of {} pairs); poisoned over control "
        "{} ({:g}%), where the two sides differ only in what the outputs hold (reference 1): the "
        "work depends on what the outputs hold",
        median(p.poisoned_us), median(p.control_us), p.source, p.poisoned_us.size(),
        shown(*output), percent);
  }
  const auto paused = pause_ratio(p);
  const auto reference = reference_pause_ratio(p);
  if (paused && reference && paused->low > reference->high) {
    return fmt::format(
        "back to back a launch took {:.2f} us, after launches on the same buffers and a pause of "
        "{:.0f} us {:.2f} us (CUPTI kernel time, medians of {} pairs); paused over back to back "
        "{} ({:g}%), the harness's copy of {} bytes {}: the work depends on the time since the "
        "last launch",
        median(p.back_to_back_us), p.pause_us, median(p.paused_us), p.paused_us.size(),
        shown(*paused), percent, p.reference_bytes, shown(*reference));
  }
  return std::nullopt;
}

nlohmann::json to_json(const unseen_inputs& u) {
  return {{"source", u.source},
          {"seen_us", u.seen_us},
          {"unseen_us", u.unseen_us},
          {"in_place_us", u.in_place_us},
          {"differing", u.differing}};
}

unseen_inputs unseen_inputs_from_json(const nlohmann::json& j) {
  return {.source = j.at("source").get<std::string>(),
          .seen_us = j.at("seen_us").get<std::vector<double>>(),
          .unseen_us = j.at("unseen_us").get<std::vector<double>>(),
          .in_place_us = j.value("in_place_us", std::vector<double>()),
          .differing = j.value("differing", std::vector<std::string>())};
}

std::optional<std::string> kept_answers(const unseen_inputs& u) {
  if (u.differing.empty()) return std::nullopt;
  return fmt::format(
      "launches on the case's other draws did not give what the gate's runs of those draws gave "
      "({}): the answer depends on the draw the kernel was timed on",
      fmt::join(u.differing, "; "));
}

std::optional<std::string> input_dependence(const unseen_inputs& u) {
  if (u.seen_us.empty() || u.unseen_us.empty()) return std::nullopt;
  const double seen = median(u.seen_us);
  // Every one of them, each a launch of its own: one slow launch is noise, not evidence.
  const bool slower = std::all_of(u.unseen_us.begin(), u.unseen_us.end(), [&](double us) {
    return us > seen * (1.0 + relative_slack) + absolute_slack_us;
  });
  if (!slower) return std::nullopt;
  return fmt::format(
      "launches on the case's other draws took {:.2f} us, on the timed draw uploaded the same "
      "way {:.2f} us ({}, median of {}): the work depends on having met the inputs before",
      fmt::join(u.unseen_us, " and "), seen, u.source, u.seen_us.size());
}

}  // namespace blaster
