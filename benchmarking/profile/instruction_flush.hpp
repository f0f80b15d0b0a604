#pragma once

#include <cuda.h>

#include <string>
#include <string_view>

#include "benchmarking/timing/internal_kernel.hpp"
#include "core/device_buffer.hpp"

namespace blaster {

class compile_cache;

// Empties the SMs' instruction and constant caches before a counted kernel, as Nsight Compute's
// cache control does: a kernel whose straight-line code is larger than those caches runs on every
// SM, so the next kernel fetches its own instructions and parameters from memory. Without it a
// kernel counted again finds them still cached and stalls less on fetching them than under ncu.
class instruction_flush {
 public:
  instruction_flush(int sm_count, const std::string& arch, compile_cache* cache);

  // What the device calls the flush's kernel, so that a record of what ran can leave it out.
  static constexpr std::string_view kernel_name = "blaster_instruction_sweep";

  void operator()(CUstream stream);

 private:
  unsigned grid_;
  cuda::device_buffer sink_;
  internal_kernel sweep_;
};

}  // namespace blaster
