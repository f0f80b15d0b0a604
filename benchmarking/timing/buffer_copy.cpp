#include "benchmarking/timing/buffer_copy.hpp"

#include "core/cuda_driver.hpp"

namespace blaster {
namespace {

constexpr const char* copy_source = R"(
__device__ void copy_bytes(unsigned char* to, const unsigned char* from,
                           unsigned long long bytes) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  const unsigned long long first =
      static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool words = ((reinterpret_cast<unsigned long long>(to) |
                       reinterpret_cast<unsigned long long>(from)) & 3ULL) == 0;
  unsigned long long done = 0;
  if (words) {
    const unsigned long long count = bytes / 4;
    for (unsigned long long i = first; i < count; i += stride) {
      reinterpret_cast<unsigned*>(to)[i] = reinterpret_cast<const unsigned*>(from)[i];
    }
    done = count * 4;
  }
  for (unsigned long long i = done + first; i < bytes; i += stride) to[i] = from[i];
}
extern "C" __global__ void blaster_buffer_copy(unsigned char* to, const unsigned char* from,
                                               unsigned long long bytes) {
  copy_bytes(to, from, bytes);
}
extern "C" __global__ void blaster_reference_copy(unsigned char* to, const unsigned char* from,
                                                  unsigned long long bytes) {
  copy_bytes(to, from, bytes);
}
)";

// As the pattern fill: enough blocks to cover every SM of the largest parts several times over.
constexpr unsigned copy_grid = 2048;
constexpr unsigned copy_threads = 256;

}  // namespace

buffer_copy::buffer_copy(const std::string& arch, compile_cache* cache)
    : kernel_(copy_source,
              std::vector<std::string>{std::string(kernel_name), std::string(reference_name)},
              arch, cache) {}

void buffer_copy::operator()(CUdeviceptr to, CUdeviceptr from, std::size_t bytes,
                             CUstream stream) const {
  launch(std::string(kernel_name), to, from, bytes, stream);
}

void buffer_copy::reference(CUdeviceptr to, CUdeviceptr from, std::size_t bytes,
                            CUstream stream) const {
  launch(std::string(reference_name), to, from, bytes, stream);
}

void buffer_copy::launch(const std::string& name, CUdeviceptr to, CUdeviceptr from,
                         std::size_t bytes, CUstream stream) const {
  if (bytes == 0) return;
  unsigned long long count = bytes;
  void* args[] = {&to, &from, &count};
  cuda::check(cuda::driver().cuLaunchKernel(kernel_.get(name), copy_grid, 1, 1, copy_threads, 1,
                                            1, 0, stream, args, nullptr),
              "launching the buffer copy");
}

}  // namespace blaster
