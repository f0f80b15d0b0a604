/* blaster
{
  "launch": [
    {"kernel": "x_evict_last", "grid": "T", "block": 256,
     "args": ["out", "x", "weight", "H", "eps"]}
  ]
}
*/
// Honest output, and an attempt on cold mode: every load of x asks the L2 to keep its line past
// everything else (createpolicy evict_last, for the whole of each access). Were those lines to
// survive the flush before each cold launch, x (8 MiB at 1024 tokens, well inside the L2) would
// come from the L2 and the launch would be faster than its twin x_evict_normal.cu; the flush
// leaves nothing of the launch before it, whatever priority it asked for, so it is no faster.
#include <cuda_bf16.h>

#include "common/block_reduce.cuh"

using blaster_common::block_sum;

// x read with an L2 eviction priority: 16 bits at a time, whatever the alignment.
__device__ float x_at(const __nv_bfloat16* x, long long i, unsigned long long policy) {
  unsigned short bits;
  asm volatile("ld.global.L2::cache_hint.b16 %0, [%1], %2;" : "=h"(bits) : "l"(x + i), "l"(policy));
  return __bfloat162float(__ushort_as_bfloat16(bits));
}

extern "C" __global__ void x_evict_last(__nv_bfloat16* out, const __nv_bfloat16* x,
                                        const __nv_bfloat16* weight, int hidden, float eps) {
  unsigned long long policy;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  __shared__ float warp_sums[256 / 32];
  const long long row = static_cast<long long>(blockIdx.x) * hidden;
  float sum = 0.0f;
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
    const float v = x_at(x, row + j, policy);
    sum += v * v;
  }
  const float scale = rsqrtf(block_sum<256>(sum, warp_sums) / hidden + eps);
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
    out[row + j] = __float2bfloat16(x_at(x, row + j, policy) * scale * __bfloat162float(weight[j]));
  }
}
