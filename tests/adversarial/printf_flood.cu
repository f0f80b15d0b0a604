/* blaster
{
  "launch": [
    {"kernel": "printf_flood", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Noisy: correct, but prints a line for every sixty-fourth position. The worker's standard
// output is /dev/null, so the flood reaches no one; the verdict is on its output alone.
// expect: passed
#include <cuda_fp16.h>

extern "C" __global__ void printf_flood(__half* out, const __half* x, int batches, int channels,
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
  if (position % 64 == 0) printf("position %lld scale %f\n", position, scale);
  for (int c = 0; c < channels; ++c) {
    const long long i = base + static_cast<long long>(c) * plane;
    out[i] = __float2half(__half2float(x[i]) * scale);
  }
}
