/* blaster
{
  "launch": [
    {"kernel": "gemv_naive", "grid": "ceil_div(M*N, 256)", "block": 256,
     "args": ["y", "x", "w", "M", "N", "K"]}
  ]
}
*/
// The first version a newcomer writes: one thread per output, its dot product in float.
#include <cuda_bf16.h>

extern "C" __global__ void gemv_naive(__nv_bfloat16* y, const __nv_bfloat16* x,
                                      const __nv_bfloat16* w, int tokens, int outputs, int depth) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<long long>(tokens) * outputs) return;
  const long long m = i / outputs;
  const long long n = i % outputs;
  float sum = 0.0f;
  for (int k = 0; k < depth; ++k) {
    sum += __bfloat162float(x[m * depth + k]) * __bfloat162float(w[n * depth + k]);
  }
  y[i] = __float2bfloat16(sum);
}
