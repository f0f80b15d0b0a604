#include "profiling/counters.hpp"

namespace blaster {

const std::vector<std::string>& stall_reasons() {
  // clang-format off
  static const std::vector<std::string> reasons{
      "barrier",            "branch_resolving", "dispatch_stall", "drain",
      "gmma",               "imc_miss",         "lg_throttle",    "long_scoreboard",
      "math_pipe_throttle", "membar",           "mio_throttle",   "misc",
      "no_instruction",     "not_selected",     "selected",       "short_scoreboard",
      "sleeping",           "tex_throttle",     "wait"};
  // clang-format on
  return reasons;
}

std::string stall_counter(std::string_view reason) {
  return std::string(counter::stall_prefix) + std::string(reason) +
         std::string(counter::stall_suffix);
}

const std::vector<std::string>& profiled_counters() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n{std::string(counter::duration_ns),
                               std::string(counter::dram_bytes_read),
                               std::string(counter::dram_bytes_written),
                               std::string(counter::dram_throughput_pct),
                               std::string(counter::l2_throughput_pct),
                               std::string(counter::l2_hit_pct),
                               std::string(counter::l1_hit_pct),
                               std::string(counter::sm_throughput_pct),
                               std::string(counter::tensor_pipe_pct),
                               std::string(counter::achieved_occupancy_pct),
                               std::string(counter::instructions),
                               std::string(counter::sm_frequency_hz),
                               std::string(counter::dram_frequency_hz)};
    for (const auto& r : stall_reasons()) n.push_back(stall_counter(r));
    return n;
  }();
  return names;
}

bool is_additive(std::string_view name) { return name.ends_with(".sum"); }

}  // namespace blaster
