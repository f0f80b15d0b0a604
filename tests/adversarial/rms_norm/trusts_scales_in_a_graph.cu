/* blaster
{
  "launch": [
    {"kernel": "trusts_scales_in_a_graph", "grid": "T", "block": 256,
     "args": ["out", "x", "weight", "H", "eps"]}
  ]
}
*/
// Cheat, keyed by the gap between launches: a graph's launches follow each other more closely
// than a stream's. It keeps each token's scale from its last launch that computed them, and the
// shortest time it has seen between the end of one of its launches and the start of the next. A
// launch that starts within a quarter more than that shortest gap (and within 20 us) of the last
// one's end, as a graph-mode sample's launches do, takes the kept scales and makes one pass over
// x; launches further apart, as runs of launches from a stream may be, compute in full.
// expect: stale_in_timing
#include <cuda_bf16.h>

#include "common/block_reduce.cuh"

using blaster_common::block_sum;

constexpr int kTokens = 8192;
constexpr unsigned long long kRunGapNs = 20000;
constexpr unsigned long long kClockStepNs = 100;  // what the device clock may round a gap by
__device__ float scales[kTokens];
__device__ long long scaled_elements = -1;
__device__ unsigned long long last_end_ns = 0;
__device__ unsigned long long shortest_gap_ns = ~0ULL;
__device__ unsigned int finished = 0;

__device__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

extern "C" __global__ void trusts_scales_in_a_graph(__nv_bfloat16* out, const __nv_bfloat16* x,
                                                    const __nv_bfloat16* weight, int hidden,
                                                    float eps) {
  const long long n = static_cast<long long>(gridDim.x) * hidden;
  const long long row = static_cast<long long>(blockIdx.x) * hidden;
  const bool tracked = gridDim.x <= kTokens;
  __shared__ bool trust;
  __shared__ float warp_sums[256 / 32];
  if (threadIdx.x == 0) {
    const unsigned long long gap = now_ns() - last_end_ns;
    const unsigned long long shortest = shortest_gap_ns;
    trust = tracked && scaled_elements == n && gap < kRunGapNs &&
            gap <= shortest + shortest / 4 + kClockStepNs;
    // Block 0 alone keeps the record, so that it is one launch's gap.
    if (blockIdx.x == 0 && gap < shortest) shortest_gap_ns = gap;
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
    if (tracked && !trust) scaled_elements = n;
    last_end_ns = now_ns();
    finished = 0;
    __threadfence();
  }
}
