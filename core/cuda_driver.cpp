#include "core/cuda_driver.hpp"

#include <dlfcn.h>

#include <cudaTypedefs.h>

namespace blaster::cuda {
namespace {

std::string describe_with(const driver_api& api, CUresult code) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cuGetErrorName != nullptr) api.cuGetErrorName(code, &name);
  if (api.cuGetErrorString != nullptr) api.cuGetErrorString(code, &text);
  if (name == nullptr) return fmt::format("CUDA error {}", static_cast<int>(code));
  return text == nullptr ? std::string(name) : fmt::format("{}: {}", name, text);
}

struct loaded_driver {
  driver_api api;
  std::string failure;  // empty when the driver is usable
};

loaded_driver load() {
  loaded_driver result;
  void* library = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    result.failure = fmt::format("no CUDA driver on this machine ({})", ::dlerror());
    return result;
  }
  auto get_proc =
      reinterpret_cast<PFN_cuGetProcAddress_v12000>(::dlsym(library, "cuGetProcAddress_v2"));
  if (get_proc == nullptr) {
    result.failure = "the CUDA driver is older than 12.0 (no cuGetProcAddress_v2)";
    return result;
  }
  driver_api& api = result.api;
  std::string missing;
#define BLASTER_LOAD_ENTRY(name)                                                      \
  {                                                                                   \
    void* entry = nullptr;                                                            \
    CUdriverProcAddressQueryResult found{};                                           \
    if (get_proc(#name, &entry, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &found) != \
            CUDA_SUCCESS ||                                                           \
        entry == nullptr) {                                                           \
      missing += missing.empty() ? #name : ", " #name;                                \
    }                                                                                 \
    api.name = reinterpret_cast<decltype(api.name)>(entry);                           \
  }
  BLASTER_DRIVER_FUNCTIONS(BLASTER_LOAD_ENTRY)
#undef BLASTER_LOAD_ENTRY
  if (!missing.empty()) {
    int version = 0;
    if (api.cuDriverGetVersion != nullptr) api.cuDriverGetVersion(&version);
    result.failure = fmt::format(
        "the CUDA driver ({}.{}) lacks {}; blaster needs a driver for CUDA {}.{} or newer",
        version / 1000, version % 1000 / 10, missing, CUDA_VERSION / 1000,
        CUDA_VERSION % 1000 / 10);
    return result;
  }
  if (CUresult status = api.cuInit(0); status != CUDA_SUCCESS) {
    result.failure = fmt::format("cuInit failed: {}", describe_with(api, status));
    return result;
  }
  int devices = 0;
  if (api.cuDeviceGetCount(&devices) != CUDA_SUCCESS || devices == 0) {
    result.failure = "the CUDA driver is present but sees no GPU";
  }
  return result;
}

const loaded_driver& loaded() {
  static const loaded_driver instance = load();
  return instance;
}

}  // namespace

const driver_api& driver() {
  const loaded_driver& state = loaded();
  if (!state.failure.empty()) throw gpu_unavailable(state.failure);
  return state.api;
}

std::string driver_unavailable_reason() { return loaded().failure; }

std::string describe(CUresult code) { return describe_with(loaded().api, code); }

std::string error_name(CUresult code) {
  const std::string text = describe(code);
  return text.substr(0, text.find(':'));
}

void check(CUresult code, std::string_view what) {
  if (code != CUDA_SUCCESS) throw cuda_error(code, fmt::format("{}: {}", what, describe(code)));
}

}  // namespace blaster::cuda
