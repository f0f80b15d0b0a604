/* blaster
{
  "launch": [
    {"kernel": "before_start", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Broken: correct output, and the last thread also writes 3 MiB before the start of out, as a
// negative index from a signed overflow would.
// expect: out_of_bounds_write
#include <cuda_fp16.h>

extern "C" __global__ void before_start(__half* out, const __half* x, int batches, int channels,
                                        int plane, float eps) {
  const long long position = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long positions = static_cast<long long>(batches) * plane;
  if (position >= positions) return;
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
  if (position == positions - 1) out[-3LL * 1024 * 1024 / 2] = __float2half(1.0f);
}
