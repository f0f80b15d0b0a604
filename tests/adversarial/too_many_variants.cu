/* blaster
{
  "launch": [
    {"kernel": "too_many_variants", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ],
  "params": {"UNROLL": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16],
             "SALT": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]}
}
*/
// Unbounded params: 16 x 17 = 272 combinations, each a compile, a gate and a timing of its own.
// SALT changes nothing but the compile key, so every one is a fresh compile. At most 256
// combinations are allowed (--max-variants raises it).
// expect: plan_error
#include <cuda_fp16.h>

extern "C" __global__ void too_many_variants(__half* out, const __half* x, int batches,
                                             int channels, int plane, float eps) {
  const long long position = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (position >= static_cast<long long>(batches) * plane) return;
  const long long base = (position / plane) * channels * plane + position % plane + SALT * 0;
  float sum = 0.0f;
#pragma unroll UNROLL
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
