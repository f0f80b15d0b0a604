#pragma once

#include <string>
#include <string_view>

#include "benchmarking/timing/internal_kernel.hpp"
#include "core/device_buffer.hpp"

namespace blaster {

class compile_cache;

namespace cuda {
class stream;
}

// The SM clock right now, from a one-thread kernel that spins for a fixed number of cycles
// (clock64) and reads the global nanosecond timer (%globaltimer) around the spin. Run between
// samples, it tells a throttled sample from a slow kernel.
class sm_clock_probe {
 public:
  sm_clock_probe(const std::string& arch, compile_cache* cache);

  // What the device calls the probe's kernel, so that a record of what ran can leave it out.
  static constexpr std::string_view kernel_name = "blaster_sm_clock";

  // [MHz] cycles over nanoseconds of one multiprocessor; the spin lasts about 100 us.
  [[nodiscard]] double measure_mhz(const cuda::stream& stream) const;

 private:
  internal_kernel kernel_;
  cuda::device_buffer result_;
};

}  // namespace blaster
