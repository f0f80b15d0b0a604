/* blaster
{
  "launch": [
    {"kernel": "writes_input", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Cheat: correct output, but it also normalizes x in place, as an in-place kernel would; the
// caller's input is gone.
// expect: input_modified
#include <cuda_fp16.h>

extern "C" __global__ void writes_input(__half* out, __half* x, int batches, int channels,
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
    const __half y = __float2half(__half2float(x[i]) * scale);
    out[i] = y;
    x[i] = y;
  }
}
