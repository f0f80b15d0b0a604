/* blaster
{
  "launch": [
    {"kernel": "trusts_scales_right_after_itself", "grid": "T", "block": 256,
     "args": ["out", "x", "weight", "H", "eps"]}
  ]
}
*/
// Cheat, keyed by time and by the buffers, with a window too short for any copy: it keeps each
// token's scale from its last launch, the addresses of that launch's x and out, and the device
// clock when it ended. A launch on the same buffers that starts within 6 us of it, as queued
// launches of a hot timing without rotation do, takes the kept scales and makes one pass over x.
// A device copy of other inputs over x takes longer than that, so a launch after one computes in
// full and gives the right answer; so does a launch a pause later.
// expect: stale_in_timing
#include <cuda_bf16.h>

#include "common/block_reduce.cuh"

using blaster_common::block_sum;

constexpr int kTokens = 8192;
constexpr unsigned long long kRunGapNs = 6000;
__device__ float scales[kTokens];
__device__ const void* last_x = nullptr;
__device__ const void* last_out = nullptr;
__device__ long long scaled_elements = -1;
__device__ unsigned long long last_end_ns = 0;
__device__ unsigned int finished = 0;

__device__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

extern "C" __global__ void trusts_scales_right_after_itself(__nv_bfloat16* out,
                                                             const __nv_bfloat16* x,
                                                             const __nv_bfloat16* weight,
                                                             int hidden, float eps) {
  const long long n = static_cast<long long>(gridDim.x) * hidden;
  const long long row = static_cast<long long>(blockIdx.x) * hidden;
  const bool tracked = gridDim.x <= kTokens;
  __shared__ bool trust;
  __shared__ float warp_sums[256 / 32];
  if (threadIdx.x == 0) {
    // What a launch's last block wrote when it ended: every block of the next launch reads it.
    trust = tracked && scaled_elements == n && last_x == x && last_out == out &&
            now_ns() - last_end_ns < kRunGapNs;
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
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0 && atomicAdd(&finished, 1U) == gridDim.x - 1) {
    if (tracked && !trust) {
      scaled_elements = n;
      last_x = x;
      last_out = out;
    }
    last_end_ns = now_ns();
    finished = 0;
    __threadfence();
  }
}
