#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "benchmarking/internal_kernel.hpp"

namespace blaster {

class compile_cache;

// A device range the reference kernel reads or writes.
struct stream_range {
  CUdeviceptr at = 0;
  std::size_t bytes = 0;
};

// The harness's own kernel that reads every byte of some ranges once and writes a word over
// others: what an honest streaming kernel of a task does to the memory system, with nothing a
// candidate can change. Timed the way a timing's output-dependence check times the candidate
// (back to back over the buffer sets, and alone after a write elsewhere), it measures how much
// slower the caches make a launch after a write on this device, for these bytes.
class stream_reference {
 public:
  stream_reference(const std::string& arch, compile_cache* cache);

  static constexpr std::string_view kernel_name = "blaster_stream_reference";
  // At most this many ranges each way; more are a harness error.
  static constexpr std::size_t max_ranges = 16;

  void operator()(const std::vector<stream_range>& reads, const std::vector<stream_range>& writes,
                  std::uint32_t word, CUstream stream) const;

 private:
  internal_kernel kernel_;
};

}  // namespace blaster
