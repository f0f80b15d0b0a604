#include "benchmarking/hot_timer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "benchmarking/statistics.hpp"
#include "core/cuda_stream.hpp"

namespace blaster {

timing_samples time_hot(const std::function<void(CUstream)>& enqueue, const cuda::stream& stream,
                        const hot_timing_options& options) {
  cuda::event start;
  cuda::event stop;
  auto run = [&](int launches) {
    start.record(stream);
    for (int i = 0; i < launches; ++i) enqueue(stream.get());
    stop.record(stream);
    return static_cast<double>(cuda::elapsed_ms(start, stop));
  };

  // Warm-up keeps module load, first-touch and clock ramp out of the numbers.
  run(options.warmup_launches);
  // Calibrate on a short burst: one launch alone overstates the per-launch time.
  const double probe_ms = run(4) / 4.0;
  timing_samples out;
  out.inner = static_cast<int>(
      std::clamp(std::ceil(options.target_sample_ms / std::max(probe_ms, 1e-4)), 1.0, 100000.0));

  const auto began = std::chrono::steady_clock::now();
  for (int s = 0; s < options.samples; ++s) {
    out.sample_us.push_back(run(out.inner) * 1000.0 / out.inner);
    const double spent_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count();
    if (static_cast<int>(out.sample_us.size()) >= options.min_samples &&
        spent_ms > options.budget_ms) {
      break;
    }
  }
  out.median_us = median(out.sample_us);
  return out;
}

}  // namespace blaster
