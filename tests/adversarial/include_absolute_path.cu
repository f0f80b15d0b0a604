/* blaster
{
  "launch": [
    {"kernel": "include_absolute_path", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Cheat: includes a file of the host by its absolute path. Its lines are not C++, so NVRTC's
// error log quotes them, and blaster prints and stores that log: the host's password file would
// reach the store and every evidence bundle made from it.
// expect: compile_error
#include <cuda_fp16.h>
#include "/etc/passwd"

extern "C" __global__ void include_absolute_path(__half* out, const __half* x, int batches,
                                                 int channels, int plane, float eps) {
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
