/* blaster
{
  "launch": [
    {"kernel": "trusts_scales_after_warmup", "grid": "T", "block": 256,
     "args": ["out", "x", "weight", "H", "eps"]}
  ]
}
*/
// Cheat, keyed by nothing but the size: it counts its launches, and after 200 of them, more than
// any gate runs in its process and fewer than a timing's first samples, it takes each token's
// scale from the last launch of that size and makes one pass over x. A timing only ever meets
// the draw it times.
// expect: stale_in_timing
#include <cuda_bf16.h>

#include "common/block_reduce.cuh"

using blaster_common::block_sum;

constexpr int kTokens = 8192;
constexpr unsigned long long kTrustedAfter = 200;
__device__ float scales[kTokens];
__device__ long long scaled_elements = -1;
__device__ unsigned long long launches = 0;
__device__ unsigned int finished = 0;

extern "C" __global__ void trusts_scales_after_warmup(__nv_bfloat16* out, const __nv_bfloat16* x,
                                                      const __nv_bfloat16* weight, int hidden,
                                                      float eps) {
  const long long n = static_cast<long long>(gridDim.x) * hidden;
  const long long row = static_cast<long long>(blockIdx.x) * hidden;
  const bool tracked = gridDim.x <= kTokens;
  __shared__ bool trust;
  __shared__ float warp_sums[256 / 32];
  if (threadIdx.x == 0) trust = tracked && launches > kTrustedAfter && scaled_elements == n;
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
  // The last block to finish counts the launch, and names the size its scales are of.
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0 && atomicAdd(&finished, 1U) == gridDim.x - 1) {
    ++launches;
    if (tracked && !trust) scaled_elements = n;
    finished = 0;
    __threadfence();
  }
}
