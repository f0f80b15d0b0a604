/* blaster
{
  "launch": [
    {"kernel": "swiglu_packs<THREADS>", "grid": "ceil_div(T * ceil_div(I, 8), THREADS)",
     "block": "THREADS", "args": ["out", "x", "T", "I"]}
  ],
  "params": {"THREADS": [256, 128]}
}
*/
// A thread per eight outputs: one 16-byte load of the gate, one of the up half, one 16-byte
// store, silu through the fast exponential. Rows that are not whole packs take the same math
// one element at a time.
#include <cuda_bf16.h>

#include "common/bf16_pack.cuh"

using blaster_common::aligned16;
using blaster_common::bf16x8;

namespace {

__device__ __forceinline__ float silu(float a) { return a / (1.0f + __expf(-a)); }

}  // namespace

template <int THREADS>
__global__ void __launch_bounds__(THREADS)
    swiglu_packs(__nv_bfloat16* __restrict__ out, const __nv_bfloat16* __restrict__ x, int tokens,
                 int width) {
  const int per_row = (width + 7) / 8;
  const long long pack = static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x;
  if (pack >= static_cast<long long>(tokens) * per_row) return;
  const long long t = pack / per_row;
  const int first = static_cast<int>(pack % per_row) * 8;
  const __nv_bfloat16* gate = x + t * 2 * width + first;
  const __nv_bfloat16* up = gate + width;
  __nv_bfloat16* to = out + t * width + first;
  if (width % 8 == 0 && aligned16(x, out)) {
    bf16x8 g, u, o;
    g.v = __ldcs(reinterpret_cast<const uint4*>(gate));
    u.v = __ldcs(reinterpret_cast<const uint4*>(up));
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float2 fg = __bfloat1622float2(g.h2[k]);
      const float2 fu = __bfloat1622float2(u.h2[k]);
      o.h2[k] = __floats2bfloat162_rn(silu(fg.x) * fu.x, silu(fg.y) * fu.y);
    }
    __stcs(reinterpret_cast<uint4*>(to), o.v);
    return;
  }
  for (int j = 0; j < 8 && first + j < width; ++j) {
    to[j] = __float2bfloat16(silu(__bfloat162float(gate[j])) * __bfloat162float(up[j]));
  }
}
