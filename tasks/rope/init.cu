/* blaster
{
  "launch": [
    {"kernel": "rope_naive", "grid": "T * (QH + KH)", "block": 64,
     "args": ["q_out", "k_out", "q", "k", "cos_sin", "positions", "QH", "KH", "D"]}
  ]
}
*/
// The first version a newcomer writes: one block per token and head (q's heads, then k's), each
// thread rotating a strided share of the head's pairs.
#include <cuda_bf16.h>

extern "C" __global__ void rope_naive(__nv_bfloat16* q_out, __nv_bfloat16* k_out,
                                      const __nv_bfloat16* q, const __nv_bfloat16* k,
                                      const __nv_bfloat16* cos_sin, const int* positions,
                                      int q_heads, int k_heads, int dim) {
  const int heads = q_heads + k_heads;
  const int t = blockIdx.x / heads;
  const int h = blockIdx.x % heads;
  const bool is_q = h < q_heads;
  const long long row = is_q ? (static_cast<long long>(t) * q_heads + h) * dim
                             : (static_cast<long long>(t) * k_heads + (h - q_heads)) * dim;
  const __nv_bfloat16* x = is_q ? q : k;
  __nv_bfloat16* out = is_q ? q_out : k_out;
  const __nv_bfloat16* cache = cos_sin + static_cast<long long>(positions[t]) * dim;
  const int half = dim / 2;
  for (int i = threadIdx.x; i < half; i += blockDim.x) {
    const float c = __bfloat162float(cache[i]);
    const float s = __bfloat162float(cache[half + i]);
    const float a = __bfloat162float(x[row + i]);
    const float b = __bfloat162float(x[row + half + i]);
    out[row + i] = __float2bfloat16(a * c - b * s);
    out[row + half + i] = __float2bfloat16(b * c + a * s);
  }
}
