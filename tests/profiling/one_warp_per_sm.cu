/* blaster
{
  "launch": [
    {"kernel": "rmsnorm_one_warp_per_sm", "grid": 132, "block": 32,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Correct, and starved: one warp on each of the H200's 132 SMs walks every position in turn,
// so each SM has one warp's loads in flight and waits on each of them.
#include <cuda_fp16.h>

extern "C" __global__ void rmsnorm_one_warp_per_sm(__half* out, const __half* x, int batches,
                                                   int channels, int plane, float eps) {
  const long long positions = static_cast<long long>(batches) * plane;
  for (long long position = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
       position < positions; position += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long base = position / plane * channels * plane + position % plane;
    float sum_squares = 0.0f;
    for (int c = 0; c < channels; ++c) {
      const float v = __half2float(x[base + static_cast<long long>(c) * plane]);
      sum_squares += v * v;
    }
    const float scale = rsqrtf(sum_squares / channels + eps);
    for (int c = 0; c < channels; ++c) {
      const long long at = base + static_cast<long long>(c) * plane;
      out[at] = __float2half(__half2float(x[at]) * scale);
    }
  }
}
