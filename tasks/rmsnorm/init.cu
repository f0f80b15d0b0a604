/* blaster
{
  "launch": [
    {"kernel": "rmsnorm_naive", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// The first version a newcomer writes: one thread per (b, h, w) position, looping over the
// channels twice, once for the mean of squares and once to scale.
#include <cuda_fp16.h>

extern "C" __global__ void rmsnorm_naive(__half* out, const __half* x, int batches, int channels,
                                         int plane, float eps) {
  const long long position = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (position >= static_cast<long long>(batches) * plane) return;
  const long long b = position / plane;
  const long long p = position % plane;
  const __half* in = x + b * channels * plane + p;
  __half* to = out + b * channels * plane + p;
  float sum_squares = 0.0f;
  for (int c = 0; c < channels; ++c) {
    const float v = __half2float(in[static_cast<long long>(c) * plane]);
    sum_squares += v * v;
  }
  const float scale = rsqrtf(sum_squares / channels + eps);
  for (int c = 0; c < channels; ++c) {
    const long long i = static_cast<long long>(c) * plane;
    to[i] = __float2half(__half2float(in[i]) * scale);
  }
}
