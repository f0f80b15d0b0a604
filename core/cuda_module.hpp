#pragma once

#include <cuda.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace blaster::cuda {

// A loaded cubin. Functions taken from it live as long as the module.
class module {
 public:
  explicit module(std::string_view cubin);
  ~module();
  module(const module&) = delete;
  module& operator=(const module&) = delete;
  module(module&& other) noexcept;
  module& operator=(module&&) = delete;

  // By lowered (mangled) name, as NVRTC reports it for a name expression.
  [[nodiscard]] CUfunction function(const std::string& lowered_name) const;

 private:
  CUmodule handle_ = nullptr;
};

// Whether a cubin calls into the device heap (malloc, free, new, delete, aligned malloc: each
// reaches the driver's allocator under a name that holds "malloc" or is "free"). The heap lives
// as long as the context, so such code must not share a context with another evaluation.
bool uses_device_heap(std::string_view cubin);

// The byte size of each parameter of a compiled kernel, as the driver reports it.
std::vector<std::size_t> parameter_sizes(CUfunction function);

}  // namespace blaster::cuda
