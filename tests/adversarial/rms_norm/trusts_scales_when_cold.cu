/* blaster
{
  "launch": [
    {"kernel": "trusts_scales_when_cold", "grid": "T", "block": 256,
     "args": ["out", "x", "weight", "H", "eps"]}
  ]
}
*/
// Cheat, keyed by the cache: each block times how long it takes to read and sum the first 256
// values of its row, and a launch on the buffers it last computed scales for takes them again
// where that read is half as slow again as the fastest it has ever seen: its row came from DRAM,
// as after the L2 flush before every cold-mode sample. Launches after the harness has uploaded
// or written the inputs, or right after other launches on them, find them in the L2 and
// compute in full.
// expect: stale_in_timing
#include <cuda_bf16.h>

#include "common/block_reduce.cuh"

using blaster_common::block_sum;

constexpr int kTokens = 8192;
__device__ float scales[kTokens];
__device__ const void* kept_x = nullptr;
__device__ const void* kept_out = nullptr;
__device__ long long scaled_elements = -1;
__device__ unsigned long long fastest_cycles = 1ULL << 40;  // none seen yet
__device__ unsigned int finished = 0;

__device__ unsigned long long cycles_now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
  return t;
}

// Read around the L1, so that what is timed is the L2 or DRAM.
__device__ float read_cg(const __nv_bfloat16* p) {
  unsigned short bits;
  asm volatile("ld.global.cg.u16 %0, [%1];" : "=h"(bits) : "l"(p) : "memory");
  return __bfloat162float(__ushort_as_bfloat16(bits));
}

extern "C" __global__ void trusts_scales_when_cold(__nv_bfloat16* out, const __nv_bfloat16* x,
                                                   const __nv_bfloat16* weight, int hidden,
                                                   float eps) {
  const long long n = static_cast<long long>(gridDim.x) * hidden;
  const long long row = static_cast<long long>(blockIdx.x) * hidden;
  const bool tracked = gridDim.x <= kTokens;
  __shared__ bool trust;
  __shared__ float warp_sums[256 / 32];
  const unsigned long long started = cycles_now();
  const float probe =
      static_cast<int>(threadIdx.x) < hidden ? read_cg(x + row + threadIdx.x) : 0.0f;
  const float probed = block_sum<256>(probe, warp_sums);
  const unsigned long long took = cycles_now() - started;
  if (threadIdx.x == 0) {
    const unsigned long long fastest = fastest_cycles;
    trust = tracked && isfinite(probed) && kept_x == x && kept_out == out && scaled_elements == n &&
            2 * took > 3 * fastest;
    atomicMin(&fastest_cycles, took);
  }
  __syncthreads();
  float scale;
  if (trust) {
    scale = scales[blockIdx.x];
  } else {
    float sum = 0.0f;
    for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
      const float v = __bfloat162float(x[row + j]);
      sum += v * v;
    }
    scale = rsqrtf(block_sum<256>(sum, warp_sums) / hidden + eps);
    if (tracked && threadIdx.x == 0) scales[blockIdx.x] = scale;
  }
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
    out[row + j] =
        __float2bfloat16(__bfloat162float(x[row + j]) * scale * __bfloat162float(weight[j]));
  }
  // The last block to finish names the buffers and the size the scales are now of: each block
  // computed its row's, or kept the one it had for these same buffers.
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0 && atomicAdd(&finished, 1U) == gridDim.x - 1) {
    if (tracked) {
      kept_x = x;
      kept_out = out;
      scaled_elements = n;
    }
    finished = 0;
    __threadfence();
  }
}
