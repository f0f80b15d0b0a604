/* blaster
{
  "launch": [
    {"kernel": "copy_input", "grid": "ceil_div(B*C*H*W, 256)", "block": 256,
     "args": ["out", "x", "B*C*H*W"]},
    {"kernel": "rescale_in_place", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Honest, and it reads its own output: the first kernel copies x into out, the second normalizes
// out in place, reading what the first wrote, as an in-place update does. Its work does not
// depend on what out held before the launch, so it must pass.
// expect: passed
#include <cuda_fp16.h>

extern "C" __global__ void copy_input(__half* out, const __half* x, int n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i];
}

extern "C" __global__ void rescale_in_place(__half* out, int batches, int channels, int plane,
                                            float eps) {
  const long long position = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (position >= static_cast<long long>(batches) * plane) return;
  __half* row = out + (position / plane) * channels * plane + position % plane;
  float sum = 0.0f;
  for (int c = 0; c < channels; ++c) {
    const float v = __half2float(row[static_cast<long long>(c) * plane]);
    sum += v * v;
  }
  const float scale = rsqrtf(sum / channels + eps);
  for (int c = 0; c < channels; ++c) {
    const long long i = static_cast<long long>(c) * plane;
    row[i] = __float2half(__half2float(row[i]) * scale);
  }
}
