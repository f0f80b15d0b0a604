/* blaster
{
  "launch": [
    {"kernel": "gelu_naive", "grid": "ceil_div(B*D, 256)", "block": 256,
     "args": ["out", "x", "B*D"]}
  ]
}
*/
// The first version a newcomer writes: one thread per element, computed in float with erff.
#include <cuda_fp16.h>

extern "C" __global__ void gelu_naive(__half* out, const __half* x, int n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float v = __half2float(x[i]);
  out[i] = __float2half(0.5f * v * (1.0f + erff(v * 0.70710678118654752f)));
}
