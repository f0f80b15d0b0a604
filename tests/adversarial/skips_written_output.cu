/* blaster
{
  "launch": [
    {"kernel": "skips_written_output", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Cheat: reads its own output first and skips the work where the output is no longer a NaN,
// that is, where a harness's poison was overwritten by an earlier launch. Every checked launch
// meets poisoned outputs and computes; back-to-back timed launches find the answer and return.
// expect: stale_in_timing|impossible_speed
#include <cuda_fp16.h>

extern "C" __global__ void skips_written_output(__half* out, const __half* x, int batches,
                                                int channels, int plane, float eps) {
  const long long position = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (position >= static_cast<long long>(batches) * plane) return;
  const long long base = (position / plane) * channels * plane + position % plane;
  if (!__hisnan(out[base])) return;  // already written: nothing to do
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
