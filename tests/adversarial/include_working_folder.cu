/* blaster
{
  "launch": [
    {"kernel": "include_working_folder", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Cheat: a quoted include with a relative path, which NVRTC looks up in its working folder:
// where blaster runs, that is the default store, whose database holds other people's results.
// expect: compile_error
#include <cuda_fp16.h>
#include ".blaster/blaster.db"

extern "C" __global__ void include_working_folder(__half* out, const __half* x, int batches,
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
