#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>

namespace blaster::cuda {

// What blaster reports about the GPU it runs on; every measurement is bound to this.
struct device_properties {
  int ordinal = 0;
  std::string name;
  std::string uuid;
  int compute_major = 0;
  int compute_minor = 0;
  int sm_count = 0;
  int sm_clock_khz = 0;
  int memory_clock_khz = 0;
  int memory_bus_width_bits = 0;
  int l2_bytes = 0;
  int max_shared_per_block_optin_bytes = 0;
  int max_threads_per_block = 0;
  std::uint64_t total_memory_bytes = 0;
  int driver_version = 0;  // 13000 for CUDA 13.0

  [[nodiscard]] std::string arch() const;  // "sm_90a" for compute capability 9.0
};

// The primary context of one device, made current on the calling thread for the object's
// lifetime. Everything that allocates or launches needs one.
class context {
 public:
  explicit context(int ordinal = 0);
  ~context();
  context(const context&) = delete;
  context& operator=(const context&) = delete;

  [[nodiscard]] const device_properties& properties() const noexcept { return properties_; }
  [[nodiscard]] CUdevice device() const noexcept { return device_; }
  [[nodiscard]] CUcontext get() const noexcept { return handle_; }

 private:
  CUdevice device_ = 0;
  CUcontext handle_ = nullptr;
  device_properties properties_;
};

// Reads the properties without keeping a context; used by `blaster doctor`.
device_properties query_device(int ordinal = 0);

}  // namespace blaster::cuda
