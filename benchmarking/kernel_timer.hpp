#pragma once

#include <cuda.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace blaster {

namespace cuda {
class stream;
}
class sm_clock_probe;

// How a sample is taken. hot: back-to-back launches between two CUDA events, caches warm, the
// count calibrated to about target_sample_ms; cold: the L2 flushed before a single launch per
// sample; graph: the launches of a hot sample captured once in a CUDA graph and replayed, so that
// host submission drops out for kernels shorter than a launch.
enum class timing_mode { hot, cold, graph };

std::string_view to_string(timing_mode mode);
std::optional<timing_mode> parse_timing_mode(std::string_view name);

struct timing_options {
  timing_mode mode = timing_mode::hot;
  double target_sample_ms = 1.0;  // [milliseconds] hot and graph
  int warmup_launches = 3;
  // Stop once the relative noise (stddev over mean) of the kept samples is at most max_noise
  // after at least min_samples, or at max_samples, or when sampling has taken budget_ms.
  int min_samples = 10;
  int max_samples = 1000;
  double max_noise = 0.005;
  double budget_ms = 2000.0;  // [milliseconds]
  // A sample taken while the SM clock ran below this fraction of the device's rated clock is
  // discarded: it measures throttling, not the kernel.
  double min_clock_fraction = 0.75;
};

struct timing_samples {
  timing_mode mode = timing_mode::hot;
  int inner = 1;                  // launches of the plan per sample
  std::vector<double> sample_us;  // [microseconds] per launch, kept samples only
  double median_us = 0.0;         // [microseconds]
  double noise = 0.0;             // relative noise of the kept samples
  std::string stopped_by;         // converged, budget, max_samples
  int discarded = 0;              // samples dropped for a low clock
  double mean_clock_mhz = 0.0;    // [MHz] over the kept samples; 0 without a clock probe
  // From CUPTI, over one more pass after the samples: the kernels' own time on the device per
  // run of the plan, the events' time for the same pass, and whether the kernels that ran are
  // the plan's (`activity_error` says how they are not).
  double kernel_us = 0.0;                            // [microseconds]
  double activity_event_us = 0.0;                    // [microseconds]
  std::vector<std::pair<std::string, int>> kernels;  // name, executions in the pass
  std::string activity_error;
};

// One sample whose output is checked after it ran: `before` is called ahead of the sample's
// start event, so that what it enqueues (poisoning the outputs) stays outside the timed region;
// `after` once the sample's stop event has completed.
struct spot_check {
  int sample = -1;
  std::function<void()> before;
  std::function<void()> after;
};

// Where a sample's work goes: the L2 flush of cold mode, the clock read after each sample.
struct timing_environment {
  std::function<void(CUstream)> flush_l2;  // required for cold mode
  const sm_clock_probe* clock = nullptr;   // optional
  double rated_clock_mhz = 0.0;
};

// `enqueue` puts one complete run of the plan on the stream.
timing_samples time_kernel(const std::function<void(CUstream)>& enqueue, const cuda::stream& stream,
                           const timing_options& options, const timing_environment& environment,
                           const spot_check* spot = nullptr);

}  // namespace blaster
