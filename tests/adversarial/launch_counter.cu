/* blaster
{
  "launch": [
    {"kernel": "launch_counter", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Cheat: counts its launches in a __device__ counter and computes the answer only for the first
// 60, enough for every check of the gate; after that, during timing, it returns at once.
// expect: stale_in_timing
#include <cuda_fp16.h>

__device__ unsigned long long launches = 0;

extern "C" __global__ void launch_counter(__half* out, const __half* x, int batches, int channels,
                                          int plane, float eps) {
  __shared__ bool skip;
  if (threadIdx.x == 0) {
    skip = launches > 60;
    // One increment per launch, by its last block to start.
    if (blockIdx.x == gridDim.x - 1) atomicAdd(&launches, 1ULL);
  }
  __syncthreads();
  if (skip) return;
  const long long position = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (position >= static_cast<long long>(batches) * plane) return;
  const long long base = (position / plane) * channels * plane + position % plane;
  float sum = 0.0f;
  for (int c = 0; c < channels; ++c) {
    const float v = __half2float(x[base + static_cast<long long>(c) * plane]);
    sum += v * v;
  }
  const float scale = rsqrtf(sum / channels + eps);
  for (int c = 0; c < channels; ++c) {
    const long long i = base + static_cast<long long>(c) * plane;
    out[i] = __float2half(__half2float(x[i]) * scale);
  }
}
