#include "benchmarking/ceilings/launch_floor.hpp"

#include "benchmarking/timing/internal_kernel.hpp"
#include "benchmarking/timing/kernel_timer.hpp"
#include "benchmarking/timing/l2_flush.hpp"
#include "core/cuda_context.hpp"
#include "core/cuda_driver.hpp"
#include "core/cuda_stream.hpp"
#include "core/error.hpp"
#include "profiling/kernel_activity.hpp"

namespace blaster {

launch_floors measure_launch_floors(const cuda::context& context, const cuda::stream& stream,
                                    compile_cache* cache) {
  const internal_kernel kernel(R"(extern "C" __global__ void blaster_empty() {})", "blaster_empty",
                               context.properties().arch(), cache);
  CUfunction empty = kernel.get();
  auto launch = [&](CUstream s, int) {
    cuda::check(cuda::driver().cuLaunchKernel(empty, 1, 1, 1, 1, 1, 1, 0, s, nullptr, nullptr),
                "launching the empty kernel");
  };
  l2_flush flush(context.properties().l2_bytes, context.properties().arch(), cache);
  const timing_environment plain{.flush_l2 = [&](CUstream s) { flush(s); },
                                 .clock = nullptr,
                                 .rated_clock_mhz = 0.0,
                                 .record = {},
                                 .recorded_us = {}};
  // A mode timed by the device's own record takes its floor the same way (by events where CUPTI
  // is unavailable, as its timing then is too). Those last: CUPTI, once started, slows every
  // launch a little.
  kernel_recorder recorder({std::string(l2_flush::kernel_name)});
  timing_environment recorded = plain;
  record_through(recorder, recorded);
  auto floor_us = [&](const timing_mode_traits& mode) {
    timing_options options;
    options.mode = mode.mode;
    options.max_samples = 200;
    options.budget_ms = 500.0;
    return time_kernel(launch, stream, options, mode.timed_by_device ? recorded : plain).median_us;
  };
  launch_floors floors;
  for (const bool by_device : {false, true}) {
    for (const auto& mode : timing_modes()) {
      if (mode.timed_by_device == by_device) floors.us[mode.mode] = floor_us(mode);
    }
  }
  return floors;
}

}  // namespace blaster
