/* blaster
{
  "launch": [
    {"kernel": "nan_output", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Broken: writes NaN instead of the largest outputs.
// expect: nonfinite
#include <cuda_fp16.h>

extern "C" __global__ void nan_output(__half* out, const __half* x, int batches, int channels,
                                      int plane, float eps) {
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
    const float y = __half2float(x[i]) * scale;
    out[i] = fabsf(y) > 2.5f ? __float2half(nanf("")) : __float2half(y);
  }
}
