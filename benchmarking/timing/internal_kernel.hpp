#pragma once

#include <cuda.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/cuda_module.hpp"

namespace blaster {

class compile_cache;

namespace cuda {
class stream;
}
struct timing_samples;

// The harness's own kernels (the copies, the empty kernel, the clock probe), compiled from
// source with NVRTC and loaded: the same path every candidate takes. One source may hold several
// kernels, compiled together.
class internal_kernel {
 public:
  // `name` is an extern "C" kernel in `source`.
  internal_kernel(const std::string& source, const std::string& name, const std::string& arch,
                  compile_cache* cache);
  // `names` are name expressions of kernels in `source`, e.g. "copy<uint4>"; the first is get().
  internal_kernel(const std::string& source, const std::vector<std::string>& names,
                  const std::string& arch, compile_cache* cache);

  [[nodiscard]] CUfunction get() const noexcept { return functions_.at(names_.front()); }
  [[nodiscard]] CUfunction get(const std::string& name) const { return functions_.at(name); }

  // The samples of one launch on `grid` blocks of `threads`, hot, each sample about 2 ms long:
  // how the harness's ceilings time their kernels.
  [[nodiscard]] timing_samples launch_samples(const std::string& name, unsigned grid,
                                              unsigned threads, void** args,
                                              const cuda::stream& stream) const;
  // [microseconds] the median of launch_samples for the first kernel.
  [[nodiscard]] double median_launch_us(unsigned grid, unsigned threads, void** args,
                                        const cuda::stream& stream) const;

 private:
  std::optional<cuda::module> module_;
  std::vector<std::string> names_;
  std::map<std::string, CUfunction, std::less<>> functions_;
};

}  // namespace blaster
