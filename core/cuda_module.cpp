#include "core/cuda_module.hpp"

#include <utility>

#include "core/cuda_driver.hpp"

namespace blaster::cuda {

module::module(std::string_view cubin) {
  check(driver().cuModuleLoadData(&handle_, cubin.data()), "cuModuleLoadData");
}

module::~module() {
  if (handle_ != nullptr) driver().cuModuleUnload(handle_);
}

module::module(module&& other) noexcept :handle_(std::exchange(other.handle_, nullptr)) {}

CUfunction module::function(const std::string& lowered_name) const {
  CUfunction f = nullptr;
  check(driver().cuModuleGetFunction(&f, handle_, lowered_name.c_str()),
        fmt::format("cuModuleGetFunction({})", lowered_name));
  return f;
}

bool uses_device_heap(std::string_view cubin) {
  // The names sit NUL-terminated in the ELF string table; a kernel whose own name holds them
  // only costs its worker a restart.
  return cubin.find("malloc") != std::string_view::npos ||
         cubin.find(std::string_view("\0free\0", 6)) != std::string_view::npos;
}

std::vector<std::size_t> parameter_sizes(CUfunction function) {
  std::vector<std::size_t> sizes;
  for (std::size_t index = 0;; ++index) {
    std::size_t offset = 0;
    std::size_t size = 0;
    // The driver answers CUDA_ERROR_INVALID_VALUE one past the last parameter.
    if (driver().cuFuncGetParamInfo(function, index, &offset, &size) != CUDA_SUCCESS) break;
    sizes.push_back(size);
  }
  return sizes;
}

}  // namespace blaster::cuda
