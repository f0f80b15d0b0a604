#include "benchmarking/runner/gpu_choice.hpp"

#include <charconv>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"

namespace blaster {
namespace {

// "0: NVIDIA H200, 1: NVIDIA H200", what the refusals show.
std::string listing(const std::vector<cuda::device_properties>& devices) {
  if (devices.empty()) return "no GPU";
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < devices.size(); ++i)
    parts.push_back(fmt::format("{}: {}", i, devices[i].name));
  return fmt::format("{} GPU{} ({})", devices.size(), devices.size() == 1 ? "" : "s",
                     fmt::join(parts, ", "));
}

}  // namespace

gpu_choice parse_gpu_choice(std::string_view text) {
  gpu_choice choice;
  if (text == "all") {
    choice.all = true;
    return choice;
  }
  std::string_view rest = text;
  while (true) {
    const std::string_view item = rest.substr(0, rest.find(','));
    int ordinal = -1;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), ordinal);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || ordinal < 0) {
      BLASTER_INPUT_ERROR(
          "--gpus {}: give 'all' or GPU numbers separated by commas, as CUDA numbers them here "
          "(0,1); `blaster doctor` lists them",
          text);
    }
    choice.ordinals.push_back(ordinal);
    if (item.size() == rest.size()) break;
    rest.remove_prefix(item.size() + 1);
  }
  return choice;
}

std::string to_string(const gpu_choice& choice) {
  return choice.all ? std::string("all") : fmt::format("{}", fmt::join(choice.ordinals, ","));
}

std::vector<gpu_lane> resolve_gpu_choice(const gpu_choice& choice,
                                         const std::vector<cuda::device_properties>& devices,
                                         const std::vector<std::string>& visible) {
  std::vector<int> ordinals = choice.ordinals;
  if (choice.all) {
    for (std::size_t i = 0; i < devices.size(); ++i) ordinals.push_back(static_cast<int>(i));
  }
  if (ordinals.empty()) {
    BLASTER_INPUT_ERROR("--gpus {}: this machine shows {}", to_string(choice), listing(devices));
  }
  std::set<int> seen;
  for (const int o : ordinals) {
    if (o >= static_cast<int>(devices.size())) {
      BLASTER_INPUT_ERROR("--gpus {}: there is no GPU {}; this machine shows {}", to_string(choice),
                          o, listing(devices));
    }
    if (!seen.insert(o).second) {
      BLASTER_INPUT_ERROR("--gpus {}: GPU {} is named twice; name each GPU once", to_string(choice),
                          o);
    }
  }
  const cuda::device_properties& first = devices[static_cast<std::size_t>(ordinals.front())];
  for (const int o : ordinals) {
    const cuda::device_properties& d = devices[static_cast<std::size_t>(o)];
    if (d.name != first.name || d.arch() != first.arch()) {
      BLASTER_INPUT_ERROR(
          "--gpus {}: GPU {} ({}) and GPU {} ({}) are of two models; a run compares the numbers "
          "of one GPU model, so name GPUs of one model (run each model apart, and merge the "
          "homes)",
          to_string(choice), ordinals.front(), first.name, o, d.name);
    }
  }
  std::vector<gpu_lane> lanes;
  for (const int o : ordinals) {
    const auto k = static_cast<std::size_t>(o);
    lanes.push_back({.ordinal = o,
                     .visible = visible.empty() ? std::to_string(o) : visible.at(k),
                     .device = devices[k]});
  }
  return lanes;
}

}  // namespace blaster
