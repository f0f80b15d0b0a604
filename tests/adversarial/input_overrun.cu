/* blaster
{
  "launch": [
    {"kernel": "input_overrun", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Broken: correct output, and it stores a partial sum 256 KiB past the end of its input x,
// through a pointer it cast from const, as a scratch area it never asked for.
// expect: out_of_bounds_write
#include <cuda_fp16.h>

extern "C" __global__ void input_overrun(__half* out, const __half* x, int batches, int channels,
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
    out[i] = __float2half(__half2float(x[i]) * scale);
  }
  if (position == 0) {
    const long long n = static_cast<long long>(batches) * channels * plane;
    reinterpret_cast<float*>(const_cast<__half*>(x) + n)[64 * 1024] = sum;  // 256 KiB past it
  }
}
