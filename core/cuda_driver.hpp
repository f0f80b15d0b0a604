#pragma once

// The CUDA driver API, loaded from libcuda.so.1 at run time. Nothing links against the driver,
// so `blaster` starts, compiles and verifies on a machine that has no GPU and no driver.

#include <cuda.h>

#include <string>
#include <string_view>

#include "core/error.hpp"

namespace blaster::cuda {

// Each entry is requested through cuGetProcAddress for the ABI of the headers we build with
// (CUDA_VERSION), so `decltype(&name)` is the matching signature. A function whose signature
// changed in that version under the same name (cuCtxSynchronize in 13.0 takes a context) must
// not be listed: the driver would hand back the new one for the old prototype.
#define BLASTER_DRIVER_FUNCTIONS(X) \
  X(cuInit)                         \
  X(cuDriverGetVersion)             \
  X(cuGetErrorName)                 \
  X(cuGetErrorString)               \
  X(cuDeviceGetCount)               \
  X(cuDeviceGet)                    \
  X(cuDeviceGetName)                \
  X(cuDeviceGetAttribute)           \
  X(cuDeviceTotalMem)               \
  X(cuDeviceGetUuid)                \
  X(cuDevicePrimaryCtxRetain)       \
  X(cuDevicePrimaryCtxRelease)      \
  X(cuCtxSetCurrent)                \
  X(cuCtxSetLimit)                  \
  X(cuCtxResetPersistingL2Cache)    \
  X(cuMemAlloc)                     \
  X(cuMemFree)                      \
  X(cuMemcpyHtoD)                   \
  X(cuMemcpyHtoDAsync)              \
  X(cuMemcpyDtoH)                   \
  X(cuMemcpyDtoD)                   \
  X(cuMemcpyDtoDAsync)              \
  X(cuMemsetD8Async)                \
  X(cuMemsetD16Async)               \
  X(cuMemsetD32Async)               \
  X(cuMemGetInfo)                   \
  X(cuMemGetAllocationGranularity)  \
  X(cuMemAddressReserve)            \
  X(cuMemAddressFree)               \
  X(cuMemCreate)                    \
  X(cuMemRelease)                   \
  X(cuMemMap)                       \
  X(cuMemUnmap)                     \
  X(cuMemSetAccess)                 \
  X(cuModuleLoadData)               \
  X(cuModuleUnload)                 \
  X(cuModuleGetFunction)            \
  X(cuFuncGetAttribute)             \
  X(cuFuncSetAttribute)             \
  X(cuFuncGetParamInfo)             \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor) \
  X(cuLaunchKernel)                 \
  X(cuLaunchKernelEx)               \
  X(cuStreamCreate)                 \
  X(cuStreamDestroy)                \
  X(cuStreamSynchronize)            \
  X(cuEventCreate)                  \
  X(cuEventDestroy)                 \
  X(cuEventRecord)                  \
  X(cuEventSynchronize)             \
  X(cuEventElapsedTime)             \
  X(cuStreamBeginCapture)           \
  X(cuStreamEndCapture)             \
  X(cuGraphInstantiateWithFlags)    \
  X(cuGraphLaunch)                  \
  X(cuGraphExecDestroy)             \
  X(cuGraphDestroy)

struct driver_api {
#define BLASTER_DECLARE_ENTRY(name) decltype(&::name) name = nullptr;
  BLASTER_DRIVER_FUNCTIONS(BLASTER_DECLARE_ENTRY)
#undef BLASTER_DECLARE_ENTRY
};

// No driver, no device, or a driver too old for these headers. Commands that need a GPU say
// so in one line and exit with code 3.
class gpu_unavailable : public error {
 public:
  using error::error;
};

// A CUDA call failed. The code is kept so that callers can tell a sticky context error (an
// illegal address, a trap) from a recoverable one.
class cuda_error : public error {
 public:
  cuda_error(CUresult code, const std::string& message) : error(message), code_(code) {}
  [[nodiscard]] CUresult code() const noexcept { return code_; }

 private:
  CUresult code_;
};

// The loaded and initialized driver; throws gpu_unavailable when there is none. The first call
// loads the library and runs cuInit; later calls return the same table.
const driver_api& driver();

// Why the driver cannot be used, or an empty string when it can. Never throws.
std::string driver_unavailable_reason();

// "CUDA_ERROR_OUT_OF_MEMORY: out of memory"
std::string describe(CUresult code);
// "CUDA_ERROR_OUT_OF_MEMORY"
std::string error_name(CUresult code);

// Throws cuda_error "<what>: <describe(code)>" unless code is CUDA_SUCCESS.
void check(CUresult code, std::string_view what);

}  // namespace blaster::cuda
