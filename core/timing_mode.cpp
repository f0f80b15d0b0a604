#include "core/timing_mode.hpp"

#include <array>

namespace blaster {
namespace {

constexpr std::array<timing_mode_traits, timing_mode_count> modes{{
    {.mode = timing_mode::hot,
     .name = "hot",
     .help = "back-to-back launches per sample, caches warm",
     .clock = "CUDA events",
     .clock_legend = "between CUDA events",
     .kernel_legend = "one more sample",
     .batches_launches = true,
     .replays_graph = false,
     .flushes_l2 = false,
     .timed_by_device = false,
     .checks_every_sample = false,
     .rotates_buffers = true,
     .may_hold_l2 = true,
     .checks_output_dependence = true},
    // A single launch is timed by its own duration on the device: the events around it would add
    // the microseconds the device takes to start it.
    {.mode = timing_mode::cold,
     .name = "cold",
     .help = "the L2 flushed before each single launch, timed by the kernels' own device time "
             "(CUPTI)",
     .clock = "CUPTI kernel time",
     .clock_legend = "the kernels' own time on the device from CUPTI, one launch after an L2 flush",
     .kernel_legend = "every sample",
     .batches_launches = false,
     .replays_graph = false,
     .flushes_l2 = true,
     .timed_by_device = true,
     .checks_every_sample = true,
     .rotates_buffers = false,
     .may_hold_l2 = false,
     .checks_output_dependence = false},
    {.mode = timing_mode::graph,
     .name = "graph",
     .help = "a hot sample captured in a CUDA graph and replayed, for kernels shorter than a launch",
     .clock = "CUDA events",
     .clock_legend = "between CUDA events",
     .kernel_legend = "one more sample",
     .batches_launches = true,
     .replays_graph = true,
     .flushes_l2 = false,
     .timed_by_device = false,
     .checks_every_sample = false,
     .rotates_buffers = true,
     .may_hold_l2 = true,
     .checks_output_dependence = true},
    // Cold mode without the flush: one launch's own duration with the caches as the launches
    // before it left them (the number ncu reports with --cache-control none), outputs freshly
    // poisoned before each.
    {.mode = timing_mode::single,
     .name = "single",
     .help = "one launch per sample, caches as the last launch left them, timed by the kernels' "
             "own device time (CUPTI)",
     .clock = "CUPTI kernel time",
     .clock_legend = "the kernels' own time on the device from CUPTI, one launch, caches warm",
     .kernel_legend = "every sample",
     .batches_launches = false,
     .replays_graph = false,
     .flushes_l2 = false,
     .timed_by_device = true,
     .checks_every_sample = true,
     .rotates_buffers = false,
     .may_hold_l2 = true,
     .checks_output_dependence = false},
}};

}  // namespace

std::span<const timing_mode_traits> timing_modes() { return modes; }

const timing_mode_traits& traits_of(timing_mode mode) {
  return modes[static_cast<std::size_t>(mode)];
}

std::string_view to_string(timing_mode mode) { return traits_of(mode).name; }

std::optional<timing_mode> parse_timing_mode(std::string_view name) {
  for (const auto& t : modes) {
    if (t.name == name) return t.mode;
  }
  return std::nullopt;
}

std::string timing_mode_choices() {
  std::string out;
  for (std::size_t i = 0; i < modes.size(); ++i) {
    if (i > 0) out += i + 1 == modes.size() ? " or " : ", ";
    out += modes[i].name;
  }
  return out;
}

}  // namespace blaster
