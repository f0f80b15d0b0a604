#include "benchmarking/timing/device_compare.hpp"

#include <array>
#include <cstdint>
#include <limits>
#include <span>

#include "core/cuda_driver.hpp"
#include "core/cuda_stream.hpp"

namespace blaster {
namespace {

// Each thread counts and keeps its own first difference; one atomic per thread at the end, so a
// buffer that differs everywhere costs no more than one that differs nowhere.
constexpr const char* compare_source = R"(
template <typename T>
__device__ bool same(const unsigned char* a, const unsigned char* b, unsigned long long i) {
  return reinterpret_cast<const T*>(a)[i] == reinterpret_cast<const T*>(b)[i];
}

extern "C" __global__ void blaster_compare(const unsigned char* a, const unsigned char* b,
                                           unsigned long long elements, unsigned width,
                                           int typed, unsigned long long* result) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  unsigned long long count = 0;
  unsigned long long first = ~0ULL;
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x +
                              threadIdx.x;
       i < elements; i += stride) {
    bool equal = true;
    switch (typed ? width : 0) {
      case 2: equal = same<unsigned short>(a, b, i); break;
      case 4: equal = same<unsigned>(a, b, i); break;
      case 8: equal = same<unsigned long long>(a, b, i); break;
      default:
        for (unsigned k = 0; k < width; ++k) equal &= a[i * width + k] == b[i * width + k];
    }
    if (!equal) {
      ++count;
      first = min(first, i);
    }
  }
  if (count != 0) {
    atomicAdd(&result[0], count);
    atomicMin(&result[1], first);
  }
}
)";

constexpr unsigned compare_grid = 1056;  // enough threads in flight to stream at full bandwidth
constexpr unsigned compare_threads = 256;

}  // namespace

device_compare::device_compare(const std::string& arch, compile_cache* cache)
    : kernel_(compare_source, std::string(kernel_name), arch, cache),
      result_(2 * sizeof(std::uint64_t)) {}

std::optional<device_compare::difference> device_compare::operator()(
    CUdeviceptr a, CUdeviceptr b, std::size_t bytes, std::size_t width,
    const cuda::stream& stream) {
  if (width == 0) width = 1;
  // A pair not aligned to the element size is compared a byte at a time.
  unsigned element = static_cast<unsigned>(width);
  int typed = (a | b) % width == 0 ? 1 : 0;
  std::array<std::uint64_t, 2> result = {0, std::numeric_limits<std::uint64_t>::max()};
  result_.upload_async(std::as_bytes(std::span(result)), stream.get());
  unsigned long long elements = bytes / width;
  CUdeviceptr result_ptr = result_.get();
  void* args[] = {&a, &b, &elements, &element, &typed, &result_ptr};
  cuda::check(cuda::driver().cuLaunchKernel(kernel_.get(), compare_grid, 1, 1, compare_threads, 1,
                                            1, 0, stream.get(), args, nullptr),
              "launching the device comparison");
  stream.synchronize();
  result_.download(std::as_writable_bytes(std::span(result)));
  if (result[0] == 0) return std::nullopt;
  return difference{.first = static_cast<std::size_t>(result[1]),
                    .count = static_cast<std::size_t>(result[0])};
}

}  // namespace blaster
