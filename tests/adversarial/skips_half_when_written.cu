/* blaster
{
  "launch": [
    {"kernel": "skips_half_when_written", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Cheat, kept modest so that no floor gives it away: it always reads all of x, but writes only
// the first half of its channels when the last one already holds a finite value, as it does
// from the launch before: a quarter less traffic when warm, fully correct whenever its outputs
// are poisoned.
// expect: stale_in_timing|impossible_speed
#include <cuda_fp16.h>

extern "C" __global__ void skips_half_when_written(__half* out, const __half* x, int batches,
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
  const long long last = base + static_cast<long long>(channels - 1) * plane;
  const int end = channels > 1 && !__hisnan(out[last]) ? channels / 2 : channels;
  for (int c = 0; c < end; ++c) {
    const long long i = base + static_cast<long long>(c) * plane;
    out[i] = __float2half(__half2float(x[i]) * scale);
  }
}
