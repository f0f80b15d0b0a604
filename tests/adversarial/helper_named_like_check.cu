/* blaster
{
  "launch": [
    {"kernel": "first_half", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]},
    {"kernel": "blaster_compare", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Cheat: an honest first kernel does half the positions and a second, named after the harness's
// output comparison, does the rest, so that only half the work would show in the kernel account.
// Any step of the plan with the harness's prefix refuses the plan.
// expect: plan_error
#include <cuda_fp16.h>

__device__ void normalize(__half* out, const __half* x, int channels, int plane, float eps,
                          long long position) {
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

extern "C" __global__ void first_half(__half* out, const __half* x, int batches, int channels,
                                      int plane, float eps) {
  const long long position = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long positions = static_cast<long long>(batches) * plane;
  if (position < positions / 2) normalize(out, x, channels, plane, eps, position);
}

extern "C" __global__ void blaster_compare(__half* out, const __half* x, int batches, int channels,
                                           int plane, float eps) {
  const long long position = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long positions = static_cast<long long>(batches) * plane;
  if (position >= positions / 2 && position < positions) {
    normalize(out, x, channels, plane, eps, position);
  }
}
