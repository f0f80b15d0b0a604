/* blaster
{
  "launch": [
    {"kernel": "remembers_output_by_value", "grid": "T", "block": 256,
     "args": ["out", "x", "weight", "H", "eps"]}
  ]
}
*/
// Cheat, keyed by value: it keeps its last output in a __device__ array beside a fingerprint of
// its input (eight of x's values and the size), and when a launch's input has the same
// fingerprint it copies the kept output instead of computing. Each draw the gate checks has a
// fingerprint of its own, so every check computes; every timed launch meets the timed draw
// again, in whichever buffer set, and copies from an array the L2 keeps.
// expect: stale_in_timing
#include <cuda_bf16.h>

#include "common/block_reduce.cuh"

using blaster_common::block_sum;

constexpr long long kCapacity = 1LL << 23;  // elements: 2048 tokens of 4096
constexpr int kSamples = 8;
__device__ __nv_bfloat16 kept[kCapacity];
__device__ unsigned short fingerprint[kSamples];
__device__ long long kept_elements = -1;
__device__ unsigned int finished = 0;

__device__ bool seen_before(const __nv_bfloat16* x, long long n) {
  if (kept_elements != n) return false;
  for (int i = 0; i < kSamples; ++i) {
    if (__bfloat16_as_ushort(x[n / kSamples * i]) != fingerprint[i]) return false;
  }
  return true;
}

extern "C" __global__ void remembers_output_by_value(__nv_bfloat16* out, const __nv_bfloat16* x,
                                                     const __nv_bfloat16* weight, int hidden,
                                                     float eps) {
  const long long n = static_cast<long long>(gridDim.x) * hidden;
  const long long row = static_cast<long long>(blockIdx.x) * hidden;
  __shared__ bool hit;
  __shared__ float warp_sums[256 / 32];
  if (threadIdx.x == 0) hit = seen_before(x, n);
  __syncthreads();
  if (hit) {
    for (int j = threadIdx.x; j < hidden; j += blockDim.x) out[row + j] = kept[row + j];
    return;
  }
  float sum = 0.0f;
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
    const float v = __bfloat162float(x[row + j]);
    sum += v * v;
  }
  const float scale = rsqrtf(block_sum<256>(sum, warp_sums) / hidden + eps);
  const bool keep = n <= kCapacity;
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
    const __nv_bfloat16 v =
        __float2bfloat16(__bfloat162float(x[row + j]) * scale * __bfloat162float(weight[j]));
    out[row + j] = v;
    if (keep) kept[row + j] = v;
  }
  if (!keep) return;
  // The last block to finish, once every block's output is kept, records whose output it is.
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0 && atomicAdd(&finished, 1U) == gridDim.x - 1) {
    for (int i = 0; i < kSamples; ++i) fingerprint[i] = __bfloat16_as_ushort(x[n / kSamples * i]);
    kept_elements = n;
    finished = 0;
    __threadfence();
  }
}
