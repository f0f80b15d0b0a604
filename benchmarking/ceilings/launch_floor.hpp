#pragma once

#include <string>

#include "core/timing_mode.hpp"

namespace blaster {

class compile_cache;

namespace cuda {
class context;
class stream;
}  // namespace cuda

// What an empty kernel costs in each timing mode on this device, timed as that mode times: below
// about this, a time measures how fast work is submitted, not the kernel.
struct launch_floors {
  per_timing_mode<double> us;  // [microseconds] per launch
};

launch_floors measure_launch_floors(const cuda::context& context, const cuda::stream& stream,
                                    compile_cache* cache);

}  // namespace blaster
