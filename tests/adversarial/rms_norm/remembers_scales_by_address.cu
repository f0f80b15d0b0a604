/* blaster
{
  "launch": [
    {"kernel": "remembers_scales_by_address", "grid": "T", "block": 256,
     "args": ["out", "x", "weight", "H", "eps"]}
  ]
}
*/
// Cheat, keyed by address: each token's scale, once computed, is kept in a __device__ table
// under the addresses of x and out, and a launch on buffers it has met skips the reduction and
// makes one pass over x. The gate's draws each get buffers of their own; the timing rotates over
// a fixed few, whose values never change.
// expect: stale_in_timing
#include <cuda_bf16.h>

#include "common/block_reduce.cuh"

using blaster_common::block_sum;

constexpr int kSlots = 16;  // more than the buffer sets a timing rotates over at 1024 tokens
constexpr int kTokens = 8192;
__device__ float scales[kSlots][kTokens];
__device__ const void* slot_x[kSlots];
__device__ const void* slot_out[kSlots];
__device__ long long slot_elements[kSlots];
__device__ unsigned int next_slot = 0;
__device__ unsigned int finished = 0;

extern "C" __global__ void remembers_scales_by_address(__nv_bfloat16* out, const __nv_bfloat16* x,
                                                       const __nv_bfloat16* weight, int hidden,
                                                       float eps) {
  const long long n = static_cast<long long>(gridDim.x) * hidden;
  const long long row = static_cast<long long>(blockIdx.x) * hidden;
  const bool tracked = gridDim.x <= kTokens;
  __shared__ int slot;
  __shared__ bool hit;
  __shared__ float warp_sums[256 / 32];
  if (threadIdx.x == 0) {
    // The slot these buffers hold, else the next in turn; the table changes only when a
    // launch's last block ends, so every block of a launch reads the same.
    hit = false;
    slot = static_cast<int>(next_slot % kSlots);
    for (int s = 0; tracked && s < kSlots && !hit; ++s) {
      if (slot_x[s] == x && slot_out[s] == out && slot_elements[s] == n) {
        hit = true;
        slot = s;
      }
    }
  }
  __syncthreads();
  float scale;
  if (hit) {
    scale = scales[slot][blockIdx.x];
  } else {
    float sum = 0.0f;
    for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
      const float v = __bfloat162float(x[row + j]);
      sum += v * v;
    }
    scale = rsqrtf(block_sum<256>(sum, warp_sums) / hidden + eps);
  }
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
    out[row + j] =
        __float2bfloat16(__bfloat162float(x[row + j]) * scale * __bfloat162float(weight[j]));
  }
  if (hit || !tracked) return;
  if (threadIdx.x == 0) scales[slot][blockIdx.x] = scale;
  // The last block to finish, once every scale is in the table, gives the slot to these
  // buffers.
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0 && atomicAdd(&finished, 1U) == gridDim.x - 1) {
    slot_x[slot] = x;
    slot_out[slot] = out;
    slot_elements[slot] = n;
    ++next_slot;
    finished = 0;
    __threadfence();
  }
}
