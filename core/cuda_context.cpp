#include "core/cuda_context.hpp"

#include <array>

#include "core/cuda_driver.hpp"

namespace blaster::cuda {

std::string device_properties::arch() const {
  // Hopper's wgmma and setmaxnreg exist only on the architecture-specific target.
  const bool specific = compute_major == 9 && compute_minor == 0;
  return fmt::format("sm_{}{}{}", compute_major, compute_minor, specific ? "a" : "");
}

device_properties query_device(int ordinal) {
  const driver_api& api = driver();
  CUdevice device = 0;
  check(api.cuDeviceGet(&device, ordinal), fmt::format("cuDeviceGet({})", ordinal));
  device_properties p;
  p.ordinal = ordinal;
  std::array<char, 256> name{};
  check(api.cuDeviceGetName(name.data(), static_cast<int>(name.size()), device), "cuDeviceGetName");
  p.name = name.data();
  CUuuid uuid{};
  check(api.cuDeviceGetUuid(&uuid, device), "cuDeviceGetUuid");
  for (std::size_t i = 0; i < sizeof(uuid.bytes); ++i) {
    p.uuid += fmt::format("{:02x}", static_cast<unsigned char>(uuid.bytes[i]));
    if (i == 3 || i == 5 || i == 7 || i == 9) p.uuid += '-';
  }
  auto attribute = [&](CUdevice_attribute which, const char* label) {
    int value = 0;
    check(api.cuDeviceGetAttribute(&value, which, device),
          fmt::format("cuDeviceGetAttribute({})", label));
    return value;
  };
  p.compute_major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "compute major");
  p.compute_minor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "compute minor");
  p.sm_count = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "SM count");
  p.sm_clock_khz = attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE, "clock rate");
  p.memory_clock_khz = attribute(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, "memory clock rate");
  p.memory_bus_width_bits =
      attribute(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, "memory bus width");
  p.l2_bytes = attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2 size");
  p.max_shared_per_block_optin_bytes =
      attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "shared memory");
  p.max_threads_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "threads");
  std::size_t total = 0;
  check(api.cuDeviceTotalMem(&total, device), "cuDeviceTotalMem");
  p.total_memory_bytes = total;
  check(api.cuDriverGetVersion(&p.driver_version), "cuDriverGetVersion");
  return p;
}

context::context(int ordinal) : properties_(query_device(ordinal)) {
  const driver_api& api = driver();
  check(api.cuDeviceGet(&device_, ordinal), "cuDeviceGet");
  check(api.cuDevicePrimaryCtxRetain(&handle_, device_), "cuDevicePrimaryCtxRetain");
  if (CUresult status = api.cuCtxSetCurrent(handle_); status != CUDA_SUCCESS) {
    api.cuDevicePrimaryCtxRelease(device_);
    check(status, "cuCtxSetCurrent");
  }
}

context::~context() {
  const driver_api& api = driver();
  api.cuCtxSetCurrent(nullptr);
  api.cuDevicePrimaryCtxRelease(device_);
}

}  // namespace blaster::cuda
