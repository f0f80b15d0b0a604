/* blaster
{
  "launch": [
    {"kernel": "trusts_scales_of_recent_buffers", "grid": "T", "block": 256,
     "args": ["out", "x", "weight", "H", "eps"]}
  ]
}
*/
// Cheat, keyed by the buffers and the time since they were last used: a table of four buffer
// sets, each with its tokens' scales and the device clock when its last launch ended. A launch
// on a set of the table whose last launch ended within 20 us takes the kept scales and makes one
// pass over x; it does not care what ran in between. Buffers the harness has just uploaded to,
// or launched on a while ago, get the full computation.
// expect: stale_in_timing
#include <cuda_bf16.h>

#include "common/block_reduce.cuh"

using blaster_common::block_sum;

constexpr int kSets = 4;
constexpr int kTokens = 8192;
constexpr unsigned long long kRecentNs = 20000;
__device__ float scales[kSets][kTokens];
__device__ const void* set_x[kSets];
__device__ const void* set_out[kSets];
__device__ long long set_elements[kSets];
__device__ unsigned long long set_end_ns[kSets];
__device__ unsigned int next_set = 0;
__device__ unsigned int finished = 0;

__device__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

extern "C" __global__ void trusts_scales_of_recent_buffers(__nv_bfloat16* out,
                                                           const __nv_bfloat16* x,
                                                           const __nv_bfloat16* weight, int hidden,
                                                           float eps) {
  const long long n = static_cast<long long>(gridDim.x) * hidden;
  const long long row = static_cast<long long>(blockIdx.x) * hidden;
  const bool tracked = gridDim.x <= kTokens;
  __shared__ int set;
  __shared__ bool known;
  __shared__ bool trust;
  __shared__ float warp_sums[256 / 32];
  if (threadIdx.x == 0) {
    // The table changes only when a launch's last block ends: every block of a launch reads
    // the same.
    known = false;
    set = static_cast<int>(next_set % kSets);
    for (int s = 0; tracked && s < kSets && !known; ++s) {
      if (set_x[s] == x && set_out[s] == out && set_elements[s] == n) {
        known = true;
        set = s;
      }
    }
    trust = known && now_ns() - set_end_ns[set] < kRecentNs;
  }
  __syncthreads();
  float scale;
  if (trust) {
    scale = scales[set][blockIdx.x];
  } else {
    float sum = 0.0f;
    for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
      const float v = __bfloat162float(x[row + j]);
      sum += v * v;
    }
    scale = rsqrtf(block_sum<256>(sum, warp_sums) / hidden + eps);
    if (tracked && threadIdx.x == 0) scales[set][blockIdx.x] = scale;
  }
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
    out[row + j] =
        __float2bfloat16(__bfloat162float(x[row + j]) * scale * __bfloat162float(weight[j]));
  }
  if (!tracked) return;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0 && atomicAdd(&finished, 1U) == gridDim.x - 1) {
    if (!known) {
      set_x[set] = x;
      set_out[set] = out;
      set_elements[set] = n;
      ++next_set;
    }
    set_end_ns[set] = now_ns();
    finished = 0;
    __threadfence();
  }
}
