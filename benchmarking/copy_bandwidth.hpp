#pragma once

#include <cstdint>
#include <string>

namespace blaster {

class compile_cache;

namespace cuda {
class context;
class stream;
}  // namespace cuda

// The device's copy bandwidth as blaster's own kernel achieves it: the memory ceiling of the
// roofline. Bytes count what is read plus what is written.
struct copy_bandwidth {
  double bytes_per_second = 0.0;
  std::int64_t bytes_moved = 0;  // [bytes] per launch, read + written
  double time_us = 0.0;          // [microseconds] median per launch, best configuration
  std::string config;            // "grid 1056 x 256, 4 loads in flight"
};

// Copies a buffer far larger than L2 with a 16-byte grid-stride kernel in a few launch
// configurations and keeps the fastest, so that the ceiling is not understated.
copy_bandwidth measure_copy_bandwidth(const cuda::context& context, const cuda::stream& stream,
                                      compile_cache* cache);

}  // namespace blaster
