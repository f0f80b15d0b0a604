#pragma once

#include <cuda.h>

#include <optional>
#include <string>

#include "core/cuda_module.hpp"

namespace blaster {

class compile_cache;

namespace cuda {
class stream;
}

// One of the harness's own kernels (the copy, the empty kernel, the clock probe), compiled
// from source with NVRTC and loaded: the same path every candidate takes.
class internal_kernel {
 public:
  // `name` is an extern "C" kernel in `source`.
  internal_kernel(const std::string& source, const std::string& name, const std::string& arch,
                  compile_cache* cache);

  [[nodiscard]] CUfunction get() const noexcept { return function_; }

  // [microseconds] the median time of one launch on `grid` blocks of `threads`, hot, in samples
  // of about 2 ms: how the harness's ceilings time their kernels.
  [[nodiscard]] double median_launch_us(unsigned grid, unsigned threads, void** args,
                                        const cuda::stream& stream) const;

 private:
  std::optional<cuda::module> module_;
  CUfunction function_ = nullptr;
  std::string name_;
};

}  // namespace blaster
