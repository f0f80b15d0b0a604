/* blaster
{
  "launch": [
    {"kernel": "relu_one_per_thread", "grid": "ceil_div(B*D, 128)", "block": 128,
     "args": ["out", "x", "B*D"]}
  ]
}
*/
// Style: naive. One thread per output element, the reference's comparison one half at a time.
// Sizes: the grid covers B*D threads and the one test bounds them; no access is wider than an
// element, so no alignment is assumed. The index is 64-bit, so the large case (1.6e9 elements)
// takes no wrapped offset.
#include <cuda_fp16.h>

extern "C" __global__ void relu_one_per_thread(__half* out, const __half* x, int n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const __half zero = __float2half(0.0f);
  const __half v = x[i];
  out[i] = __hgt(v, zero) ? v : zero;
}
