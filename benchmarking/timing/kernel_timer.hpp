#pragma once

// timing/: samples of a plan's launches on one stream in each timing mode (kernel_timer),
// what a timing produced (timing_result), and the harness's own kernels that time and check it.

#include <cuda.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "benchmarking/timing/timing_result.hpp"
#include "core/timing_mode.hpp"

namespace blaster {

namespace cuda {
class stream;
}
class sm_clock_probe;
class kernel_recorder;

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
  // Hot and graph modes: run the plan over enough copies of its buffers, in turn, that one
  // sample's data exceeds the L2, so that a launch cannot find its inputs left by the last one.
  bool rotate_buffers = false;
};

// One sample whose output is checked after it ran, or every sample: `before` is called ahead of
// the sample's start event (and of cold mode's L2 flush), so that what it enqueues (poisoning
// the outputs) stays outside the timed region; `after` once the sample's stop event has
// completed, with the sample's launch count.
struct spot_check {
  int sample = -1;
  bool every_sample = false;
  std::function<void()> before;
  std::function<void(int inner)> after;
};

// Where a sample's work goes: the L2 flush of cold mode, the clock read after each sample.
struct timing_environment {
  std::function<void(CUstream)> flush_l2;  // required for cold mode
  const sm_clock_probe* clock = nullptr;   // optional
  double rated_clock_mhz = 0.0;
  // The device's own record of the kernels that ran (CUPTI), optional: `record(true)` starts
  // recording afresh (false when it cannot: then events alone time), `record(false)` stops, and
  // `recorded_us` returns the recorded kernels' device time since its last call. A single cold
  // launch is timed by it rather than by events, whose few microseconds of launch latency would
  // be a large part of it.
  std::function<bool(bool)> record;
  std::function<double()> recorded_us;
};

// Sets the environment's record hooks to CUPTI through `recorder`, which must outlive it.
void record_through(kernel_recorder& recorder, timing_environment& environment);

// `enqueue(stream, i)` puts one complete run of the plan on the stream, the i-th of its sample
// (0 to inner - 1; always 0 in cold mode), so that a caller can rotate buffer sets.
using plan_enqueue = std::function<void(CUstream, int)>;

timing_samples time_kernel(const plan_enqueue& enqueue, const cuda::stream& stream,
                           const timing_options& options, const timing_environment& environment,
                           const spot_check* spot = nullptr);

}  // namespace blaster
