#include "optimize/device_brief.hpp"

#include <regex>
#include <sstream>
#include <vector>

#include "benchmarking/worker/gate_protocol.hpp"
#include "core/timing_mode.hpp"

namespace blaster {
namespace {

// A word that names the memory, not the chip: "80GB", "HBM3", "HBM3e", "GDDR6X".
bool memory_word(const std::string& word) {
  static const std::regex memory(R"(\d+GB|HBM\w*|GDDR\w*)", std::regex::icase);
  return std::regex_match(word, memory);
}

// "A100-SXM4-80GB" without its "-80GB".
std::string without_memory_suffix(const std::string& word) {
  const auto dash = word.rfind('-');
  if (dash == std::string::npos || dash == 0 || !memory_word(word.substr(dash + 1))) return word;
  return word.substr(0, dash);
}

double gbs(double bytes_per_second) { return bytes_per_second / 1e9; }

}  // namespace

std::string gpu_model(std::string_view name) {
  constexpr std::string_view vendor = "NVIDIA ";
  if (name.substr(0, vendor.size()) == vendor) name.remove_prefix(vendor.size());
  std::istringstream words{std::string(name)};
  std::vector<std::string> kept;
  for (std::string word; words >> word;) {
    if (!memory_word(word)) kept.push_back(without_memory_suffix(word));
  }
  std::string model;
  for (const std::string& word : kept) model += (model.empty() ? "" : " ") + word;
  return model.empty() ? std::string(name) : model;
}

nlohmann::json device_brief(const bench_report& report) {
  if (!report.device) return nullptr;
  nlohmann::json j = to_json(*report.device);
  j["model"] = gpu_model(report.device->name);
  nlohmann::json ceilings = nlohmann::json::object();
  if (report.memory) {
    const memory_ceilings& m = *report.memory;
    ceilings["dram_copy_gbs"] = gbs(m.copy.bytes_per_second);
    ceilings["dram_read_gbs"] = gbs(m.read.bytes_per_second);
    ceilings["dram_write_gbs"] = gbs(m.write.bytes_per_second);
    ceilings["l2_gbs"] = gbs(m.l2.bytes_per_second);
    ceilings["dram_peak_gbs"] = gbs(m.peak_bytes_per_second);
  }
  if (report.matrix) ceilings["matrix_tflops"] = report.matrix->flops_per_second / 1e12;
  if (report.floors) {
    nlohmann::json floors = nlohmann::json::object();
    for (const auto& mode : timing_modes()) {
      const double us = report.floors->us[mode.mode];
      if (us > 0) floors[std::string(mode.name)] = us;
    }
    ceilings["launch_floor_us"] = floors;
  }
  j["ceilings"] = ceilings;
  return j;
}

}  // namespace blaster
