/* blaster
{
  "launch": [
    {"kernel": "trusts_scales_at_its_own_pace", "grid": "T", "block": 256,
     "args": ["out", "x", "weight", "H", "eps"]}
  ]
}
*/
// Cheat, keyed by the output buffer and by a window that scales with its own duration: it keeps
// each token's scale from its last launch, that launch's output address, when it ended and how
// long it ran. A launch into the same output that starts within half that duration of the
// last one's end, as queued launches of a hot timing do and nothing the harness puts between two
// launches does, takes the kept scales and makes one pass over x; any other computes in full.
// expect: stale_in_timing
#include <cuda_bf16.h>

#include "common/block_reduce.cuh"

using blaster_common::block_sum;

constexpr int kTokens = 8192;
__device__ float kept_scales[kTokens];
__device__ const void* kept_for = nullptr;
__device__ long long kept_elements = -1;
__device__ unsigned long long ended_ns = 0;
__device__ unsigned long long lasted_ns = 0;
__device__ unsigned long long started_ns = ~0ULL;
__device__ unsigned int blocks_done = 0;

__device__ unsigned long long clock_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

extern "C" __global__ void trusts_scales_at_its_own_pace(__nv_bfloat16* out,
                                                         const __nv_bfloat16* x,
                                                         const __nv_bfloat16* weight, int hidden,
                                                         float eps) {
  const long long n = static_cast<long long>(gridDim.x) * hidden;
  const long long row = static_cast<long long>(blockIdx.x) * hidden;
  const bool tracked = gridDim.x <= kTokens;
  __shared__ bool keep;
  __shared__ float warp_sums[256 / 32];
  if (threadIdx.x == 0) {
    const unsigned long long now = clock_ns();
    atomicMin(&started_ns, now);
    keep = tracked && kept_for == out && kept_elements == n && now - ended_ns < lasted_ns / 2;
  }
  __syncthreads();
  float scale;
  if (keep) {
    scale = kept_scales[blockIdx.x];
  } else {
    float sum = 0.0f;
    for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
      const float v = __bfloat162float(x[row + j]);
      sum += v * v;
    }
    scale = rsqrtf(block_sum<256>(sum, warp_sums) / hidden + eps);
    if (tracked && threadIdx.x == 0) kept_scales[blockIdx.x] = scale;
  }
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
    out[row + j] =
        __float2bfloat16(__bfloat162float(x[row + j]) * scale * __bfloat162float(weight[j]));
  }
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0 && atomicAdd(&blocks_done, 1U) == gridDim.x - 1) {
    const unsigned long long now = clock_ns();
    if (tracked && !keep) {
      kept_for = out;
      kept_elements = n;
    }
    lasted_ns = now - started_ns;
    ended_ns = now;
    started_ns = ~0ULL;
    blocks_done = 0;
    __threadfence();
  }
}
