#include "profiling/counter_profile.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

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

std::map<std::string, double> median_counters(
    const std::vector<std::map<std::string, double>>& runs) {
  std::map<std::string, double> median;
  if (runs.empty()) return median;
  std::vector<double> counts;
  for (const auto& [name, value] : runs.front()) {
    counts.clear();
    for (const auto& run : runs) {
      const auto it = run.find(name);
      if (it == run.end()) break;
      counts.push_back(it->second);
    }
    if (counts.size() != runs.size()) continue;
    std::ranges::sort(counts);
    const std::size_t middle = counts.size() / 2;
    median[name] =
        counts.size() % 2 == 1 ? counts[middle] : (counts[middle - 1] + counts[middle]) / 2;
  }
  return median;
}

std::map<std::string, std::pair<double, double>> counter_ranges(
    const std::vector<std::map<std::string, double>>& runs) {
  std::map<std::string, std::pair<double, double>> ranges;
  const std::map<std::string, double> median = median_counters(runs);  // those all runs have
  for (const auto& [name, value] : median) {
    auto& [low, high] = ranges[name] = {value, value};
    for (const auto& run : runs) {
      low = std::min(low, run.at(name));
      high = std::max(high, run.at(name));
    }
  }
  return ranges;
}

std::vector<kernel_counters> median_by_launch(const std::vector<kernel_counters>& kernels,
                                              std::size_t launches, int runs) {
  if (launches == 0 || runs < 1 || kernels.size() != launches * static_cast<std::size_t>(runs)) {
    throw std::invalid_argument(
        fmt::format("{} kernels counted where {} runs of {} launches were expected", kernels.size(),
                    runs, launches));
  }
  std::vector<kernel_counters> out;
  for (std::size_t launch = 0; launch < launches; ++launch) {
    kernel_counters k = kernels[launch];
    std::vector<std::map<std::string, double>> counts;
    for (std::size_t i = launch; i < kernels.size(); i += launches) {
      if (kernels[i].kernel != k.kernel) {
        throw std::invalid_argument(fmt::format("kernel {} is {}, where run 1 launched {}", i,
                                                kernels[i].kernel, k.kernel));
      }
      counts.push_back(kernels[i].counters);
    }
    k.launch = launch;
    k.counters = median_counters(counts);
    k.range = counter_ranges(counts);
    out.push_back(std::move(k));
  }
  return out;
}

json to_json(const kernel_counters& k) {
  json j{{"launch", k.launch}, {"kernel", k.kernel}, {"counters", k.counters}};
  if (k.occupancy) j["occupancy"] = to_json(*k.occupancy);
  if (!k.resolution.empty()) j["resolution"] = k.resolution;
  if (!k.range.empty()) j["range"] = k.range;
  return j;
}

kernel_counters kernel_counters_from_json(const json& j) {
  kernel_counters k{.launch = j.at("launch").get<std::size_t>(),
                    .kernel = j.at("kernel").get<std::string>(),
                    .counters = j.at("counters").get<std::map<std::string, double>>(),
                    .occupancy = std::nullopt,
                    .resolution = {},
                    .range = {}};
  if (j.contains("occupancy")) k.occupancy = occupancy_estimate_from_json(j["occupancy"]);
  if (j.contains("resolution")) k.resolution = j["resolution"].get<std::map<std::string, double>>();
  if (j.contains("range")) {
    k.range = j["range"].get<std::map<std::string, std::pair<double, double>>>();
  }
  return k;
}

json to_json(const counter_profile& p) {
  json kernels = json::array();
  for (const auto& k : p.kernels) kernels.push_back(to_json(k));
  return {{"source", p.source},
          {"chip", p.chip},
          {"passes", p.passes},
          {"runs", p.runs},
          {"case", p.case_name},
          {"kernels", kernels},
          {"missing", p.missing},
          {"unavailable", p.unavailable},
          {"sweep_dram_bytes_written", p.sweep_dram_bytes_written}};
}

counter_profile counter_profile_from_json(const json& j) {
  counter_profile p{.source = j.at("source").get<std::string>(),
                    .chip = j.at("chip").get<std::string>(),
                    .passes = j.at("passes").get<int>(),
                    .runs = j.value("runs", 1),
                    .case_name = j.at("case").get<std::string>(),
                    .kernels = {},
                    .missing = j.at("missing").get<std::vector<std::string>>(),
                    .sweep_dram_bytes_written = j.value("sweep_dram_bytes_written", 0.0),
                    .unavailable = j.value("unavailable", std::string())};
  for (const auto& k : j.at("kernels")) p.kernels.push_back(kernel_counters_from_json(k));
  return p;
}

}  // namespace blaster
