/* blaster
{
  "launch": [
    {"kernel": "relu_naive", "grid": "ceil_div(B*D, 256)", "block": 256,
     "args": ["out", "x", "B*D"]}
  ]
}
*/
// The first version a newcomer writes: one thread per element, one half at a time.
#include <cuda_fp16.h>

extern "C" __global__ void relu_naive(__half* out, const __half* x, int n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float v = __half2float(x[i]);
  out[i] = __float2half(fmaxf(v, 0.0f));
}
