#include "benchmarking/timing/output_dependence.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "benchmarking/statistics/statistics.hpp"

namespace blaster {
namespace {

// Launches timed alone vary by a few percent; the device's clock resolution is about 0.5 us
// for CUPTI and a little more for events.
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
          {"paused_us", p.paused_us},
          {"pause_us", p.pause_us}};
}

poisoned_launches poisoned_launches_from_json(const nlohmann::json& j) {
  return {.source = j.at("source").get<std::string>(),
          .control_us = j.at("control_us").get<std::vector<double>>(),
          .poisoned_us = j.at("poisoned_us").get<std::vector<double>>(),
          .control_event_us = j.value("control_event_us", std::vector<double>()),
          .poisoned_event_us = j.value("poisoned_event_us", std::vector<double>()),
          .hot_us = j.at("hot_us").get<double>(),
          .paused_us = j.value("paused_us", std::vector<double>()),
          .pause_us = j.value("pause_us", 0.0)};
}

double one_launch_us(double event_us, double kernel_us, std::size_t seen, std::size_t planned) {
  const bool alone = seen == planned && planned > 0;
  return alone && kernel_us <= event_us * (1.0 + clock_slack) + absolute_slack_us ? kernel_us
                                                                                  : event_us;
}

std::optional<std::string> output_dependence(const poisoned_launches& p) {
  if (p.control_us.empty() || p.poisoned_us.empty()) return std::nullopt;
  const double control = median(p.control_us);
  const double poisoned = median(p.poisoned_us);
  if (poisoned > control * (1.0 + relative_slack) + absolute_slack_us) {
    return fmt::format(
        "a launch on freshly poisoned outputs took {:.2f} us, one after an equal write elsewhere "
        "{:.2f} us ({}, medians of {}): the work depends on what the outputs hold",
        poisoned, control, p.source, p.poisoned_us.size());
  }
  if (p.hot_us <= 0.0 || p.paused_us.empty()) return std::nullopt;
  const double paused = median(p.paused_us);
  if (paused > p.hot_us * (1.0 + relative_slack) + absolute_slack_us) {
    return fmt::format(
        "back to back a launch took {:.2f} us, after launches on the same buffers and a pause of "
        "{:.0f} us {:.2f} us (CUPTI kernel time, median of {}): the work depends on the time "
        "since the last launch",
        p.hot_us, p.pause_us, paused, p.paused_us.size());
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
