#pragma once

#include <cuda.h>

#include <cstddef>
#include <string>
#include <vector>
#include <string_view>

#include "benchmarking/timing/internal_kernel.hpp"

namespace blaster {

class compile_cache;

// Copies device memory with a kernel of the harness's own, in stream order like any launch. The
// two sides of the output-dependence check write the outputs this way, from two images of equal
// size, so that they differ in what they write and in nothing else; and the check of the time
// since the last launch times it as its reference, a kernel with no memory of its own.
class buffer_copy {
 public:
  buffer_copy(const std::string& arch, compile_cache* cache);

  // What the device calls the copy's kernel, so that a record of what ran can leave it out.
  static constexpr std::string_view kernel_name = "blaster_buffer_copy";

  // The same copy under a name that a record of what ran keeps: the reference kernel.
  static constexpr std::string_view reference_name = "blaster_reference_copy";

  // Any alignment; 4-byte words where both ends are 4-byte aligned.
  void operator()(CUdeviceptr to, CUdeviceptr from, std::size_t bytes, CUstream stream) const;
  // The copy as the reference kernel, which CUPTI's record of the candidate's kernels keeps.
  void reference(CUdeviceptr to, CUdeviceptr from, std::size_t bytes, CUstream stream) const;

 private:
  void launch(const std::string& name, CUdeviceptr to, CUdeviceptr from, std::size_t bytes,
              CUstream stream) const;

  internal_kernel kernel_;
};

}  // namespace blaster
