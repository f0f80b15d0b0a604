#include "profiling/diagnosis.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace blaster {
namespace {

double value_of(const std::map<std::string, double>& counters, std::string_view name) {
  const auto it = counters.find(std::string(name));
  return it == counters.end() ? 0.0 : it->second;
}

std::optional<double> over(const std::map<std::string, double>& counters, std::string_view name,
                           double minimal) {
  const auto it = counters.find(std::string(name));
  if (it == counters.end() || !(minimal >= least_compared_bytes)) return std::nullopt;
  return it->second / minimal;
}

// Every stall reason's share of the warps' stalls, largest first (ties by name, so that the
// same counters give the same line).
std::vector<stall_share> stall_shares(const std::map<std::string, double>& counters) {
  std::vector<stall_share> shares;
  double total = 0;
  for (const auto& [name, v] : counters) {
    const std::string_view n = name;
    if (!n.starts_with(counter::stall_prefix) || !n.ends_with(counter::stall_suffix)) continue;
    if (!(v > 0)) continue;
    const std::string_view reason =
        n.substr(counter::stall_prefix.size(),
                 n.size() - counter::stall_prefix.size() - counter::stall_suffix.size());
    if (reason == "selected") continue;  // the warp issuing: a state, not a stall
    shares.push_back({std::string(reason), v});
    total += v;
  }
  for (auto& s : shares) s.share /= total;
  std::sort(shares.begin(), shares.end(), [](const stall_share& a, const stall_share& b) {
    return a.share != b.share ? a.share > b.share : a.reason < b.reason;
  });
  return shares;
}

}  // namespace

std::string_view to_string(bound_by b) {
  switch (b) {
    case bound_by::bandwidth:
      return "bandwidth-bound";
    case bound_by::compute:
      return "compute-bound";
    case bound_by::latency:
      return "latency-bound";
    case bound_by::launch:
      return "launch-bound";
  }
  return "unknown";
}

std::optional<bound_by> bound_from_string(std::string_view text) {
  for (bound_by b : {bound_by::bandwidth, bound_by::compute, bound_by::latency, bound_by::launch}) {
    if (to_string(b) == text) return b;
  }
  return std::nullopt;
}

nlohmann::json to_json(const counter_diagnosis& d) {
  nlohmann::json stalls = nlohmann::json::array();
  for (const auto& s : d.top_stalls) stalls.push_back({{"reason", s.reason}, {"share", s.share}});
  nlohmann::json j{{"bound", to_string(d.bound)}, {"memory_pct", d.memory_pct},
                   {"compute_pct", d.compute_pct}, {"top_stalls", stalls}, {"line", d.line}};
  if (d.read_over_minimal) j["read_over_minimal"] = *d.read_over_minimal;
  if (d.written_over_minimal) j["written_over_minimal"] = *d.written_over_minimal;
  return j;
}

counter_diagnosis counter_diagnosis_from_json(const nlohmann::json& j) {
  counter_diagnosis d;
  const auto bound = bound_from_string(j.at("bound").get<std::string>());
  if (!bound) throw std::invalid_argument("unknown bound: " + j.at("bound").get<std::string>());
  d.bound = *bound;
  d.memory_pct = j.at("memory_pct").get<double>();
  d.compute_pct = j.at("compute_pct").get<double>();
  for (const auto& s : j.at("top_stalls")) {
    d.top_stalls.push_back({s.at("reason").get<std::string>(), s.at("share").get<double>()});
  }
  d.line = j.at("line").get<std::string>();
  if (j.contains("read_over_minimal")) d.read_over_minimal = j["read_over_minimal"].get<double>();
  if (j.contains("written_over_minimal")) {
    d.written_over_minimal = j["written_over_minimal"].get<double>();
  }
  return d;
}

counter_diagnosis diagnose(const std::map<std::string, double>& counters,
                           const minimal_bytes& minimal, double time_us, double launch_floor_us) {
  counter_diagnosis d;
  const double dram = value_of(counters, counter::dram_throughput_pct);
  const double l2 = value_of(counters, counter::l2_throughput_pct);
  d.memory_pct = std::max(dram, l2);
  d.compute_pct = std::max(value_of(counters, counter::sm_throughput_pct),
                           value_of(counters, counter::tensor_pipe_pct));
  d.read_over_minimal = over(counters, counter::dram_bytes_read, minimal.read);
  // What the kernel wrote reaches DRAM in part only after it ends, when the L2 evicts it.
  d.written_over_minimal = over(counters, counter::dram_bytes_written, minimal.written);
  if (d.written_over_minimal) {
    *d.written_over_minimal += value_of(counters, counter::dram_bytes_written_back) / minimal.written;
  }
  d.top_stalls = stall_shares(counters);
  if (d.top_stalls.size() > 2) d.top_stalls.resize(2);

  std::string why;
  if (launch_floor_us > 0 && time_us > 0 && time_us < launch_bound_factor * launch_floor_us) {
    d.bound = bound_by::launch;
    why = fmt::format("{:.2f}x an empty kernel's time", time_us / launch_floor_us);
  } else if (std::max(d.memory_pct, d.compute_pct) >= busy_unit_pct) {
    const bool memory = d.memory_pct >= d.compute_pct;
    d.bound = memory ? bound_by::bandwidth : bound_by::compute;
    why = memory ? fmt::format("{} at {:.0f}% of peak", dram >= l2 ? "DRAM" : "L2", d.memory_pct)
                 : fmt::format("SM at {:.0f}% of peak", d.compute_pct);
  } else {
    d.bound = bound_by::latency;
    why = fmt::format("memory {:.0f}%, compute {:.0f}% of peak", d.memory_pct, d.compute_pct);
    if (counters.contains(std::string(counter::achieved_occupancy_pct))) {
      why +=
          fmt::format(", occupancy {:.0f}%", value_of(counters, counter::achieved_occupancy_pct));
    }
  }
  d.line = fmt::format("{} ({})", to_string(d.bound), why);
  if (d.read_over_minimal || d.written_over_minimal) {
    auto ratio = [](const std::optional<double>& r) {
      return r ? fmt::format("{:.2f}x", *r) : std::string("-");
    };
    d.line += fmt::format("; DRAM reads {}, writes {} the minimal bytes",
                          ratio(d.read_over_minimal), ratio(d.written_over_minimal));
  }
  if (!d.top_stalls.empty()) {
    d.line += "; stalls:";
    for (const auto& s : d.top_stalls) {
      d.line += fmt::format(" {} {:.0f}%", s.reason, 100 * s.share);
    }
  }
  return d;
}

}  // namespace blaster
