#include "benchmarking/output_dependence.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "benchmarking/statistics.hpp"

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
          {"footprint_bytes", p.footprint_bytes},
          {"poisoned_bytes", p.poisoned_bytes},
          {"l2_bytes", p.l2_bytes},
          {"reference_hot_us", p.reference_hot_us},
          {"reference_control_us", p.reference_control_us}};
}

poisoned_launches poisoned_launches_from_json(const nlohmann::json& j) {
  return {.source = j.at("source").get<std::string>(),
          .control_us = j.at("control_us").get<std::vector<double>>(),
          .poisoned_us = j.at("poisoned_us").get<std::vector<double>>(),
          .control_event_us = j.value("control_event_us", std::vector<double>()),
          .poisoned_event_us = j.value("poisoned_event_us", std::vector<double>()),
          .hot_us = j.at("hot_us").get<double>(),
          .footprint_bytes = j.at("footprint_bytes").get<std::int64_t>(),
          .poisoned_bytes = j.at("poisoned_bytes").get<std::int64_t>(),
          .l2_bytes = j.at("l2_bytes").get<std::int64_t>(),
          .reference_hot_us = j.value("reference_hot_us", 0.0),
          .reference_control_us = j.value("reference_control_us", std::vector<double>())};
}

double one_launch_us(double event_us, double kernel_us, std::size_t seen, std::size_t planned) {
  const bool alone = seen == planned && planned > 0;
  return alone && kernel_us <= event_us * (1.0 + clock_slack) + absolute_slack_us ? kernel_us
                                                                                  : event_us;
}

double cache_explains_us(const poisoned_launches& p, double copy_bytes_per_second) {
  if (copy_bytes_per_second <= 0.0) return 0.0;
  // Nothing is evicted while the data and the write fit in the L2 together; never more than
  // the L2 holds, nor more than the data.
  const std::int64_t evicted =
      std::min({std::max<std::int64_t>(0, p.footprint_bytes + p.poisoned_bytes - p.l2_bytes),
                p.l2_bytes, p.footprint_bytes});
  return static_cast<double>(evicted) / copy_bytes_per_second * 1e6;
}

double reference_explains_us(const poisoned_launches& p) {
  if (p.reference_hot_us <= 0.0 || p.reference_control_us.empty()) return 0.0;
  const double lost = std::max(0.0, median(p.reference_control_us) - p.reference_hot_us);
  return lost * std::max(1.0, p.hot_us / p.reference_hot_us);
}

std::optional<std::string> output_dependence(const poisoned_launches& p,
                                             double copy_bytes_per_second) {
  if (p.control_us.empty() || p.poisoned_us.empty()) return std::nullopt;
  const double control = median(p.control_us);
  const double poisoned = median(p.poisoned_us);
  if (poisoned > control * (1.0 + relative_slack) + absolute_slack_us) {
    return fmt::format(
        "a launch on freshly poisoned outputs took {:.2f} us, one after an equal write elsewhere "
        "{:.2f} us ({}, medians of {}): the work depends on what the outputs hold",
        poisoned, control, p.source, p.poisoned_us.size());
  }
  if (p.hot_us <= 0.0 || p.source != "CUPTI kernel time") return std::nullopt;
  const double explained =
      std::max(cache_explains_us(p, copy_bytes_per_second), reference_explains_us(p));
  if (control > p.hot_us * (1.0 + relative_slack) + explained + absolute_slack_us) {
    return fmt::format(
        "back to back a launch took {:.2f} us, after a write between launches {:.2f} us; the "
        "cache explains at most {:.2f} us of that for {} bytes of data (the harness's own "
        "streaming of them took {:.2f} us back to back, {:.2f} us after the write)",
        p.hot_us, control, explained, p.footprint_bytes, p.reference_hot_us,
        p.reference_control_us.empty() ? 0.0 : median(p.reference_control_us));
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
