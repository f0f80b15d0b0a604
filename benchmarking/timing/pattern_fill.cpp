#include "benchmarking/timing/pattern_fill.hpp"

#include "core/cuda_driver.hpp"

namespace blaster {
namespace {

constexpr const char* fill_source = R"(
extern "C" __global__ void blaster_pattern_fill(unsigned* at, unsigned long long words,
                                                unsigned tail, unsigned word) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x +
                              threadIdx.x;
       i < words; i += stride) {
    at[i] = word;
  }
  if (blockIdx.x == 0 && threadIdx.x < tail) {
    reinterpret_cast<unsigned char*>(at + words)[threadIdx.x] =
        static_cast<unsigned char>(word >> (8 * threadIdx.x));
  }
}
)";

// Enough blocks to fill every SM of the largest parts several times over.
constexpr unsigned fill_grid = 2048;
constexpr unsigned fill_threads = 256;

}  // namespace

pattern_fill::pattern_fill(const std::string& arch, compile_cache* cache)
    : kernel_(fill_source, std::string(kernel_name), arch, cache) {}

void pattern_fill::operator()(CUdeviceptr at, std::size_t bytes, std::uint32_t word,
                              CUstream stream) const {
  if (bytes == 0) return;
  unsigned long long words = bytes / 4;
  unsigned tail = static_cast<unsigned>(bytes % 4);
  void* args[] = {&at, &words, &tail, &word};
  cuda::check(cuda::driver().cuLaunchKernel(kernel_.get(), fill_grid, 1, 1, fill_threads, 1, 1, 0,
                                            stream, args, nullptr),
              "launching the pattern fill");
}

std::uint32_t repeated_word(std::uint32_t pattern, std::size_t width) {
  switch (width) {
    case 1:
      return (pattern & 0xFFU) * 0x01010101U;
    case 2:
      return (pattern & 0xFFFFU) * 0x00010001U;
    default:
      return pattern;
  }
}

}  // namespace blaster
