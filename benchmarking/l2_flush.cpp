#include "benchmarking/l2_flush.hpp"

#include "core/cuda_driver.hpp"

namespace blaster {
namespace {

constexpr const char* sweep_source = R"(
extern "C" __global__ void blaster_l2_sweep(const uint4* __restrict__ in, unsigned long long n,
                                            unsigned* sink) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  unsigned folded = 0;
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x +
                              threadIdx.x;
       i < n; i += stride) {
    const uint4 v = in[i];
    folded ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  // The fill makes every fold 0; the store the compiler cannot rule out keeps the loads.
  if (folded == 0x9E3779B9u) *sink = folded;
}
)";

constexpr unsigned sweep_grid = 1024;
constexpr unsigned sweep_threads = 512;

}  // namespace

l2_flush::l2_flush(int l2_bytes, const std::string& arch, compile_cache* cache)
    : buffer_(2 * static_cast<std::size_t>(l2_bytes)),
      sink_(sizeof(unsigned)),
      sweep_(sweep_source, std::string(kernel_name), arch, cache) {}

void l2_flush::operator()(CUstream stream) {
  buffer_.fill_u32(0x5A5A5A5AU, stream);
  evict(stream);
}

void l2_flush::evict(CUstream stream) {
  CUdeviceptr in = buffer_.get();
  unsigned long long vectors = buffer_.bytes() / 16;
  CUdeviceptr sink = sink_.get();
  void* args[] = {&in, &vectors, &sink};
  cuda::check(cuda::driver().cuLaunchKernel(sweep_.get(), sweep_grid, 1, 1, sweep_threads, 1, 1, 0,
                                            stream, args, nullptr),
              "launching the L2 sweep");
}

}  // namespace blaster
