/* blaster
{
  "launch": [
    {"kernel": "warp_race", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Broken in a way no output shows: each thread reads its neighbour's shared-memory slot right
// after the neighbour wrote it, with no __syncwarp between. A warp that runs in lockstep always
// sees the write, so the gate passes it; the language does not promise that, and racecheck
// reports the hazard. `blaster bench --sanitize` must reject it as sanitizer_error.
#include <cuda_fp16.h>

extern "C" __global__ void warp_race(__half* out, const __half* x, int batches, int channels,
                                     int plane, float eps) {
  const long long position = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool live = position < static_cast<long long>(batches) * plane;
  const long long base = live ? (position / plane) * channels * plane + position % plane : 0;
  float sum = 0.0f;
  for (int c = 0; live && c < channels; ++c) {
    const float v = __half2float(x[base + static_cast<long long>(c) * plane]);
    sum += v * v;
  }
  __shared__ float sums[256];
  sums[threadIdx.x] = sum;
  const float neighbour = sums[threadIdx.x ^ 1U];  // the race: no __syncwarp() before it
  float scale = rsqrtf(sum / channels + eps);
  if (neighbour < 0.0f) scale = 0.0f;  // a sum of squares, when the write was seen in time
  if (!live) return;
  for (int c = 0; c < channels; ++c) {
    const long long i = base + static_cast<long long>(c) * plane;
    out[i] = __float2half(__half2float(x[i]) * scale);
  }
}
