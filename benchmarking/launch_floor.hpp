#pragma once

#include <string>

namespace blaster {

class compile_cache;

namespace cuda {
class context;
class stream;
}  // namespace cuda

// What an empty kernel costs in each timing mode on this device: below about this, a time
// measures how fast work is submitted, not the kernel.
struct launch_floors {
  double hot_us = 0.0;    // [microseconds] per launch
  double cold_us = 0.0;   // [microseconds] one launch after an L2 flush, its device time
  double graph_us = 0.0;  // [microseconds] per launch replayed from a graph
};

// A result within this factor of its mode's floor is launch-bound.
inline constexpr double launch_bound_factor = 1.5;

launch_floors measure_launch_floors(const cuda::context& context, const cuda::stream& stream,
                                    compile_cache* cache);

}  // namespace blaster
