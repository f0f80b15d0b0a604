/* blaster
{
  "launch": [
    {"kernel": "include_macro_name", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Cheat: the include names its file through a macro, so that no include line shows a path: the
// preprocessor builds "/etc/hostname" from the tokens and then reads it.
// expect: compile_error
#include <cuda_fp16.h>
#define QUOTE(path) #path
#define HOST_FILE(path) QUOTE(path)
#include HOST_FILE(/etc/hostname)

extern "C" __global__ void include_macro_name(__half* out, const __half* x, int batches,
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
