#include "profiling/counter_profile.hpp"

#include "profiling/counters.hpp"

namespace blaster {

using json = nlohmann::json;

std::map<std::string, double> plan_counters(const counter_profile& p) {
  if (p.kernels.size() == 1) return p.kernels.front().counters;
  std::map<std::string, double> sums;
  std::map<std::string, double> weights;
  const std::string duration(counter::duration_ns);
  for (const auto& k : p.kernels) {
    const auto t = k.counters.find(duration);
    const double weight = t == k.counters.end() ? 1.0 : t->second;
    for (const auto& [name, value] : k.counters) {
      if (is_additive(name)) {
        sums[name] += value;
      } else {
        sums[name] += weight * value;
        weights[name] += weight;
      }
    }
  }
  for (const auto& [name, weight] : weights) {
    if (weight > 0) sums[name] /= weight;
  }
  return sums;
}

json to_json(const kernel_counters& k) {
  json j{{"launch", k.launch}, {"kernel", k.kernel}, {"counters", k.counters}};
  if (k.occupancy) j["occupancy"] = to_json(*k.occupancy);
  if (!k.resolution.empty()) j["resolution"] = k.resolution;
  return j;
}

kernel_counters kernel_counters_from_json(const json& j) {
  kernel_counters k{.launch = j.at("launch").get<std::size_t>(),
                    .kernel = j.at("kernel").get<std::string>(),
                    .counters = j.at("counters").get<std::map<std::string, double>>(),
                    .occupancy = std::nullopt,
                    .resolution = {}};
  if (j.contains("occupancy")) k.occupancy = occupancy_estimate_from_json(j["occupancy"]);
  if (j.contains("resolution")) k.resolution = j["resolution"].get<std::map<std::string, double>>();
  return k;
}

json to_json(const counter_profile& p) {
  json kernels = json::array();
  for (const auto& k : p.kernels) kernels.push_back(to_json(k));
  return {{"source", p.source}, {"chip", p.chip},       {"passes", p.passes},
          {"case", p.case_name}, {"kernels", kernels}, {"missing", p.missing},
          {"unavailable", p.unavailable}, {"sweep_dram_bytes_written", p.sweep_dram_bytes_written}};
}

counter_profile counter_profile_from_json(const json& j) {
  counter_profile p{.source = j.at("source").get<std::string>(),
                    .chip = j.at("chip").get<std::string>(),
                    .passes = j.at("passes").get<int>(),
                    .case_name = j.at("case").get<std::string>(),
                    .kernels = {},
                    .missing = j.at("missing").get<std::vector<std::string>>(),
                    .sweep_dram_bytes_written = j.value("sweep_dram_bytes_written", 0.0),
                    .unavailable = j.value("unavailable", std::string())};
  for (const auto& k : j.at("kernels")) p.kernels.push_back(kernel_counters_from_json(k));
  return p;
}

}  // namespace blaster
