#include "benchmarking/worker/worker_result.hpp"

#include "benchmarking/worker/gate_protocol.hpp"

namespace blaster {
namespace {

using json = nlohmann::json;

json to_json(const worker_failure& f) {
  json j = {{"reason", to_string(f.reason)}, {"message", f.message}};
  if (f.check) j["check"] = *f.check;
  if (!f.cuda_error.empty()) j["cuda_error"] = f.cuda_error;
  return j;
}

worker_failure worker_failure_from_json(const json& j) {
  worker_failure f{.reason = parse_reason_code(j.at("reason").get<std::string>())
                                 .value_or(reason_code::crash),
                   .message = j.at("message").get<std::string>(),
                   .check = std::nullopt,
                   .cuda_error = j.value("cuda_error", std::string())};
  if (j.contains("check")) f.check = j["check"].get<std::size_t>();
  return f;
}

}  // namespace

json to_json(const device_probe& p) {
  return {{"device", to_json(p.device)},
          {"memory", to_json(p.memory)},
          {"matrix", to_json(p.matrix)},
          {"launch_floors", to_json(p.floors)}};
}

device_probe device_probe_from_json(const json& j) {
  return {.device = device_properties_from_json(j.at("device")),
          .memory = memory_ceilings_from_json(j.at("memory")),
          .matrix = matrix_rate_from_json(j.at("matrix")),
          .floors = launch_floors_from_json(j.at("launch_floors"))};
}

json to_json(const worker_result& r) {
  json j = json::object();
  if (r.unavailable) j["unavailable"] = *r.unavailable;
  if (r.failure) j["failure"] = to_json(*r.failure);
  if (r.probe) j["probe"] = to_json(*r.probe);
  json checks = json::array();
  for (const auto& c : r.checks) checks.push_back(to_json(c));
  j["checks"] = checks;
  if (r.timing) {
    j["timing"] = {{"samples", to_json(r.timing->samples)},
                   {"checks", to_json(r.timing->checks)}};
  }
  if (r.located) j["located"] = to_json(*r.located);
  if (r.profile) j["profile"] = to_json(*r.profile);
  if (r.devices) {
    j["devices"] = json::array();
    for (const auto& d : *r.devices) j["devices"].push_back(to_json(d));
  }
  if (r.leaving) j["leaving"] = true;
  return j;
}

worker_result worker_result_from_json(const json& j) {
  worker_result r;
  if (j.contains("unavailable")) r.unavailable = j["unavailable"].get<std::string>();
  r.leaving = j.value("leaving", false);
  if (j.contains("failure")) r.failure = worker_failure_from_json(j["failure"]);
  if (j.contains("probe")) r.probe = device_probe_from_json(j["probe"]);
  for (const auto& c : j.at("checks")) r.checks.push_back(check_evidence_from_json(c));
  if (j.contains("timing")) {
    const json& t = j["timing"];
    r.timing = timing_answer{.samples = timing_samples_from_json(t.at("samples")),
                             .checks = timing_checks_from_json(t.at("checks"))};
  }
  if (j.contains("located")) r.located = check_evidence_from_json(j["located"]);
  if (j.contains("profile")) r.profile = counter_profile_from_json(j["profile"]);
  if (j.contains("devices")) {
    r.devices.emplace();
    for (const auto& d : j["devices"]) r.devices->push_back(device_properties_from_json(d));
  }
  return r;
}

}  // namespace blaster
