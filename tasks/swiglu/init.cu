/* blaster
{
  "launch": [
    {"kernel": "swiglu_naive", "grid": "ceil_div(T*I, 256)", "block": 256,
     "args": ["out", "x", "T*I", "I"]}
  ]
}
*/
// The first version a newcomer writes: one thread per output element.
#include <cuda_bf16.h>

extern "C" __global__ void swiglu_naive(__nv_bfloat16* out, const __nv_bfloat16* x, int count,
                                        int width) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const long long t = i / width;
  const long long j = i % width;
  const float gate = __bfloat162float(x[t * 2 * width + j]);
  const float up = __bfloat162float(x[t * 2 * width + width + j]);
  out[i] = __float2bfloat16(gate / (1.0f + expf(-gate)) * up);
}
