/* blaster
{
  "launch": [
    {"kernel": "blaster_l2_sweep", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Cheat: a correct kernel that takes the name of the harness's L2 sweep, which CUPTI's kernel
// account and ncu's filter leave out: its time and counters would go unseen. The prefix is the
// harness's, so the plan is refused.
// expect: plan_error
#include <cuda_fp16.h>

extern "C" __global__ void blaster_l2_sweep(__half* out, const __half* x, int batches, int channels,
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
}
