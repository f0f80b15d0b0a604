#include "benchmarking/profile/instruction_flush.hpp"

#include "core/cuda_driver.hpp"

namespace blaster {
namespace {

// 16,384 multiply-adds that no compiler can fold (each squares the last result), 256 KB of SASS:
// twice the instruction cache of an SM on Hopper. Four salts keep each unrolled block distinct.
// Before them, 2,048 take their addend from constant memory as an immediate operand, 8 KB that
// push the counted kernel's parameters out of the SMs' constant caches.
constexpr const char* sweep_source = R"(
__constant__ unsigned blaster_constant_sweep[2048];
template <unsigned Salt>
__device__ __forceinline__ unsigned churn(unsigned x) {
#pragma unroll
  for (unsigned i = 0; i < 4096; ++i) x = x * x + (i * 2654435761u + Salt);
  return x;
}
extern "C" __global__ void blaster_instruction_sweep(unsigned* sink) {
  unsigned x = threadIdx.x;
#pragma unroll
  for (unsigned i = 0; i < 2048; ++i) x = x * x + blaster_constant_sweep[i];
  x = churn<1>(x);
  x = churn<3>(x);
  x = churn<5>(x);
  x = churn<7>(x);
  // The store the compiler cannot rule out keeps the code.
  if (x == 0x9E3779B9u) *sink = x;
}
)";

// One warp per SM sub-partition, and more blocks than SMs so that every SM runs one.
constexpr unsigned sweep_threads = 128;
constexpr unsigned blocks_per_sm = 2;

}  // namespace

instruction_flush::instruction_flush(int sm_count, const std::string& arch, compile_cache* cache)
    : grid_(blocks_per_sm * static_cast<unsigned>(sm_count)),
      sink_(sizeof(unsigned)),
      sweep_(sweep_source, std::string(kernel_name), arch, cache) {}

void instruction_flush::operator()(CUstream stream) {
  CUdeviceptr sink = sink_.get();
  void* args[] = {&sink};
  cuda::check(cuda::driver().cuLaunchKernel(sweep_.get(), grid_, 1, 1, sweep_threads, 1, 1, 0,
                                            stream, args, nullptr),
              "launching the instruction sweep");
}

}  // namespace blaster
