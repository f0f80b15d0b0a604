/* blaster
{
  "launch": [
    {"kernel": "constant_output", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Cheat: writes the typical magnitude's sign-free stand-in, zero, everywhere: within atol of the
// reference wherever the reference is near zero, wrong everywhere else.
// expect: wrong_result
#include <cuda_fp16.h>

extern "C" __global__ void constant_output(__half* out, const __half* x, int batches,
                                           int channels, int plane, float eps) {
  const long long position = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (position >= static_cast<long long>(batches) * plane) return;
  const long long base = (position / plane) * channels * plane + position % plane;
  for (int c = 0; c < channels; ++c) out[base + static_cast<long long>(c) * plane] = __float2half(0.0f);
}
