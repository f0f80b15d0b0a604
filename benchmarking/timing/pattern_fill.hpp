#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "benchmarking/timing/internal_kernel.hpp"

namespace blaster {

class compile_cache;

// Writes a repeating 32-bit word over device memory with a kernel of the harness's own, in stream
// order like any launch. The poisoned and control launches of a timing write their outputs and
// the control buffer this way, so that both writes are the same work on the SMs and finished
// when the launch after them starts: the driver's memset picks its own method by width and
// memory kind.
class pattern_fill {
 public:
  pattern_fill(const std::string& arch, compile_cache* cache);

  // What the device calls the fill's kernel, so that a record of what ran can leave it out.
  static constexpr std::string_view kernel_name = "blaster_pattern_fill";

  // `at` 4-byte aligned; a tail of fewer than 4 bytes gets the word's first bytes.
  void operator()(CUdeviceptr at, std::size_t bytes, std::uint32_t word, CUstream stream) const;

 private:
  internal_kernel kernel_;
};

// The 32-bit word that repeats a pattern of `width` bytes (1, 2 or 4): what a memset of that
// width writes.
std::uint32_t repeated_word(std::uint32_t pattern, std::size_t width);

}  // namespace blaster
