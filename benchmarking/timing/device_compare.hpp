#pragma once

#include <cuda.h>

#include <cstddef>
#include <optional>
#include <string>

#include "benchmarking/timing/internal_kernel.hpp"
#include "core/device_buffer.hpp"

namespace blaster {

class compile_cache;

namespace cuda {
class stream;
}

// Two device arrays compared bit for bit on the GPU, element by element: a check of gigabytes
// costs milliseconds instead of a download and a pass over host memory.
class device_compare {
 public:
  device_compare(const std::string& arch, compile_cache* cache);

  // What the device calls the kernel, so that a record of what ran can leave it out.
  static constexpr std::string_view kernel_name = "blaster_compare";

  struct difference {
    std::size_t first = 0;  // the first differing element's index
    std::size_t count = 0;  // how many elements differ
  };

  // Elements of `width` bytes; nothing when all of `bytes` are equal. Waits for the stream.
  [[nodiscard]] std::optional<difference> operator()(CUdeviceptr a, CUdeviceptr b,
                                                     std::size_t bytes, std::size_t width,
                                                     const cuda::stream& stream);

 private:
  internal_kernel kernel_;
  cuda::device_buffer result_;  // count, then first index
};

}  // namespace blaster
