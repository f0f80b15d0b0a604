#include "benchmarking/timing/timing_result.hpp"

#include "core/error.hpp"

namespace blaster {
namespace {

using json = nlohmann::json;

json optional_json(const std::optional<stale_output>& s) {
  return s ? to_json(*s) : json(nullptr);
}

std::optional<stale_output> optional_stale(const json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return stale_output_from_json(j[key]);
}

}  // namespace

json to_json(const cupti_account& a) {
  json kernels = json::array();
  for (const auto& k : a.kernels) {
    kernels.push_back({{"kernel", k.kernel}, {"count", k.count}, {"us", k.us}});
  }
  return {{"runs", a.runs},         {"kernel_us", a.kernel_us},       {"event_us", a.event_us},
          {"kernels", kernels},     {"matches_plan", a.matches_plan}, {"error", a.error}};
}

// Reports of the previous release listed kernels as [name, count] pairs beside a
// kernel_us_by_name object, and kept no matches_plan; they read as the same account.
cupti_account cupti_account_from_json(const json& j) {
  cupti_account a{.runs = j.at("runs").get<int>(),
                  .kernel_us = j.at("kernel_us").get<double>(),
                  .event_us = j.at("event_us").get<double>(),
                  .kernels = {},
                  .matches_plan = j.value("matches_plan", false),
                  .error = j.value("error", std::string())};
  const json by_name = j.value("kernel_us_by_name", json::object());
  for (const auto& k : j.at("kernels")) {
    if (k.is_array()) {
      const auto name = k.at(0).get<std::string>();
      a.kernels.push_back({.kernel = name,
                           .count = k.at(1).get<int>(),
                           .us = by_name.value(name, 0.0)});
    } else {
      a.kernels.push_back({.kernel = k.at("kernel").get<std::string>(),
                           .count = k.at("count").get<int>(),
                           .us = k.at("us").get<double>()});
    }
  }
  if (!j.contains("matches_plan")) a.matches_plan = a.error.empty() && a.runs > 0;
  return a;
}

json to_json(const timing_samples& t) {
  return {{"mode", to_string(t.mode)},
          {"source", t.source},
          {"inner", t.inner},
          {"buffer_copies", t.buffer_copies},
          {"sample_us", t.sample_us},
          {"event_us", t.event_us},
          {"median_us", t.median_us},
          {"noise", t.noise},
          {"stopped_by", t.stopped_by},
          {"taken", t.taken},
          {"discarded_samples", t.discarded_samples},
          {"mean_clock_mhz", t.mean_clock_mhz},
          {"cupti", to_json(t.cupti)}};
}

// The previous release's reports kept the samples in the CAS alone (and their count here), and
// no median: both read as absent.
timing_samples timing_samples_from_json(const json& j) {
  const auto mode = parse_timing_mode(j.at("mode").get<std::string>());
  if (!mode) BLASTER_INPUT_ERROR("timing mode {} is unknown", j.at("mode").dump());
  return {.mode = *mode,
          .inner = j.at("inner").get<int>(),
          .buffer_copies = j.at("buffer_copies").get<int>(),
          .source = j.at("source").get<std::string>(),
          .sample_us = j.value("sample_us", std::vector<double>()),
          .event_us = j.value("event_us", std::vector<double>()),
          .median_us = j.value("median_us", 0.0),
          .noise = j.at("noise").get<double>(),
          .stopped_by = j.at("stopped_by").get<std::string>(),
          .taken = j.at("taken").get<int>(),
          .discarded_samples = j.at("discarded_samples").get<int>(),
          .mean_clock_mhz = j.at("mean_clock_mhz").get<double>(),
          .cupti = cupti_account_from_json(j.at("cupti"))};
}

json to_json(const stale_output& s) {
  return {{"buffer", s.buffer},
          {"buffer_copy", s.buffer_copy},
          {"first_index", s.first_index},
          {"differing_elements", s.differing_elements}};
}

stale_output stale_output_from_json(const json& j) {
  return {.buffer = j.at("buffer").get<std::string>(),
          .buffer_copy = j.at("buffer_copy").get<std::size_t>(),
          .first_index = j.at("first_index").get<std::size_t>(),
          .differing_elements = j.at("differing_elements").get<std::size_t>()};
}

json to_json(const timing_checks& c) {
  return {{"spot_sample", c.spot_sample},
          {"spot_every_sample", c.spot_every_sample},
          {"checked_samples", c.checked_samples},
          {"spot_stale", optional_json(c.spot_stale)},
          {"final_stale", optional_json(c.final_stale)},
          {"poisoned_launches", c.poisoned ? to_json(*c.poisoned) : json(nullptr)},
          {"poisoned_stale", optional_json(c.poisoned_stale)},
          {"unseen_inputs", c.unseen ? to_json(*c.unseen) : json(nullptr)}};
}

timing_checks timing_checks_from_json(const json& j) {
  timing_checks c{.spot_sample = j.at("spot_sample").get<int>(),
                  .spot_every_sample = j.at("spot_every_sample").get<bool>(),
                  .checked_samples = j.at("checked_samples").get<int>(),
                  .spot_stale = optional_stale(j, "spot_stale"),
                  .final_stale = optional_stale(j, "final_stale"),
                  .poisoned = std::nullopt,
                  .poisoned_stale = optional_stale(j, "poisoned_stale"),
                  .unseen = std::nullopt};
  if (const json& p = j.at("poisoned_launches"); !p.is_null()) {
    c.poisoned = poisoned_launches_from_json(p);
  }
  if (const json u = j.value("unseen_inputs", json(nullptr)); !u.is_null()) {
    c.unseen = unseen_inputs_from_json(u);
  }
  return c;
}

}  // namespace blaster
