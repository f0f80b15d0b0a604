#pragma once

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace blaster {

// A time within this factor of an empty kernel's, launched in the same mode, is held up by the
// launch, whatever the kernel does.
inline constexpr double launch_bound_factor = 1.5;

// How a sample is taken. Each mode is one row of traits below plus its sampler
// (benchmarking/timing/kernel_timer.cpp); everything else reads the traits.
enum class timing_mode { hot, cold, graph, single };

inline constexpr std::size_t timing_mode_count = 4;

struct timing_mode_traits {
  timing_mode mode;
  std::string_view name;  // as flags, task.json, suites and records spell it
  std::string_view help;  // one line for --mode's help
  // What times a sample ("CUDA events", "CUPTI kernel time"), and the same as the table's
  // legend says it.
  std::string_view clock;
  std::string_view clock_legend;
  // Where `kernel us` comes from: CUPTI over every sample, or over one more sample after them.
  std::string_view kernel_legend;
  bool batches_launches;     // a sample is many launches, their count calibrated to about 1 ms
  bool replays_graph;        // a sample is one replay of a CUDA graph of those launches
  bool flushes_l2;           // the L2 is flushed before every launch, outside the timed region
  bool timed_by_device;      // samples are the kernels' own device time (CUPTI), not events
  bool checks_every_sample;  // every sample meets freshly poisoned outputs and is checked
  // --rotate spreads its launches over copies of the buffers; and the data of one buffer set may
  // stay in the L2 between launches (hot and graph), which sets the roofline floor's level.
  bool rotates_buffers;
  bool may_hold_l2;
  // Its samples leave outputs written from one launch to the next, so launches on freshly
  // poisoned outputs are timed against them (the output-dependence check).
  bool checks_output_dependence;
};

// Every mode, in the order of the enum.
std::span<const timing_mode_traits> timing_modes();
const timing_mode_traits& traits_of(timing_mode mode);
std::string_view to_string(timing_mode mode);
std::optional<timing_mode> parse_timing_mode(std::string_view name);
// "hot, cold or graph": what an error message lists.
std::string timing_mode_choices();

// A value per timing mode, such as each mode's launch floor.
template <typename T>
struct per_timing_mode {
  std::array<T, timing_mode_count> values{};
  T& operator[](timing_mode m) { return values[static_cast<std::size_t>(m)]; }
  const T& operator[](timing_mode m) const { return values[static_cast<std::size_t>(m)]; }
};

}  // namespace blaster
