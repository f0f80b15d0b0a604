#include "benchmarking/timing/l2_flush.hpp"

#include <algorithm>

#include "core/cuda_driver.hpp"

namespace blaster {
namespace {

constexpr const char* sweep_source = R"(
extern "C" __global__ void blaster_l2_sweep(const uint4* __restrict__ in, unsigned long long n,
                                            unsigned* sink, int drop) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  unsigned folded = 0;
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x +
                              threadIdx.x;
       i < n; i += stride) {
    const uint4 v = in[i];
    folded ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (drop) {
    // Only once the whole buffer was read, which evicted what the work before left in the L2,
    // are the sweep's own lines dropped, unwritten. The fold waits for every load of this warp;
    // the lane that read a line's first vector then drops the line.
    asm volatile("" : "+r"(folded)::"memory");
    __syncwarp();
    for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x +
                                threadIdx.x;
         i < n; i += stride) {
      if (i % 8 == 0) asm volatile("discard.global.L2 [%0], 128;" ::"l"(in + i) : "memory");
    }
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
      sweep_(sweep_source, std::string(kernel_name), arch, cache) {
  // A line loaded with an evict_last hint (createpolicy, or a stream's persisting access window)
  // outlives normal lines only in the L2's set-aside for persisting accesses. This context sets
  // none aside, whatever the environment asked, and no line is left persisting: the sweep's
  // normal lines then evict every line, whatever priority a kernel asked for.
  const CUresult limit = cuda::driver().cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 0);
  if (limit != CUDA_ERROR_UNSUPPORTED_LIMIT) {
    cuda::check(limit, "setting aside no L2 for persisting accesses");
    cuda::check(cuda::driver().cuCtxResetPersistingL2Cache(), "resetting persisting L2 lines");
  }
}

void l2_flush::operator()(CUstream stream) {
  buffer_.fill_u32(0x5A5A5A5AU, stream);
  evict(stream);
}

void l2_flush::launch(CUstream stream, unsigned grid, int drop) {
  CUdeviceptr in = buffer_.get();
  unsigned long long vectors = buffer_.bytes() / 16;
  CUdeviceptr sink = sink_.get();
  void* args[] = {&in, &vectors, &sink, &drop};
  cuda::check(cuda::driver().cuLaunchKernel(sweep_.get(), grid, 1, 1, sweep_threads, 1, 1, 0,
                                            stream, args, nullptr),
              "launching the L2 sweep");
}

void l2_flush::evict(CUstream stream) { launch(stream, sweep_grid, 0); }

void l2_flush::evict_and_drop(CUstream stream, int sm_count) {
  if (resident_grid_ == 0) {
    int per_sm = 0;
    cuda::check(cuda::driver().cuOccupancyMaxActiveBlocksPerMultiprocessor(
                    &per_sm, sweep_.get(), static_cast<int>(sweep_threads), 0),
                "sizing the L2 sweep");
    resident_grid_ = static_cast<unsigned>(std::max(1, per_sm * sm_count));
  }
  launch(stream, resident_grid_, 1);
}

}  // namespace blaster
