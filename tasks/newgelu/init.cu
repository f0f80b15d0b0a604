/* blaster
{
  "launch": [
    {"kernel": "newgelu_naive", "grid": "ceil_div(B*D, 256)", "block": 256,
     "args": ["out", "x", "B*D"]}
  ]
}
*/
// The first version a newcomer writes: one thread per element, computed in float with tanhf.
#include <cuda_fp16.h>

extern "C" __global__ void newgelu_naive(__half* out, const __half* x, int n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float v = __half2float(x[i]);
  const float inner = 0.79788456080286536f * (v + 0.044715f * v * v * v);  // sqrt(2/pi)
  out[i] = __float2half(0.5f * v * (1.0f + tanhf(inner)));
}
