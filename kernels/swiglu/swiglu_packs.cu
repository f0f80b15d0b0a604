/* blaster
{
  "launch": [
    {"kernel": "swiglu_packs<THREADS, VEC>", "grid": ["ceil_div(ceil_div(I, VEC), THREADS)", "min(T, 65535)"],
     "block": "THREADS", "args": ["out", "x", "T", "I"]}
  ],
  "params": {"THREADS": [256, 128], "VEC": [8, 4, 2, 1]}
}
*/
// A thread per VEC outputs of one token: one load of the gate, one of the up half and one store of
// 2 * VEC bytes each, silu through the fast exponential and the fast divide. VEC = 8 (16-byte
// accesses) moves a long prefill with the fewest instructions; VEC = 4, 2 or 1 gives one token
// two, four or eight times the threads and blocks, which is what a launch-bound decode needs.
// The grid's y is the token, so no thread divides to find its row: a decode's whole critical path
// is the two loads (issued together), a few arithmetic instructions and the store. Rows that are
// not whole packs (and VEC = 1) take the same math one element at a time.
#include <cuda_bf16.h>

#include "common/bf16_pack.cuh"

using blaster_common::aligned16;
using blaster_common::bf16_pack;

namespace {

// a / (1 + e^-a): where e^-a overflows (a < -88) the reciprocal of infinity gives the 0 silu
// tends to; where 1 + e^-a exceeds 2^126 the fast divide also gives 0 for a quotient below 1e-36.
__device__ __forceinline__ float silu(float a) { return __fdividef(a, 1.0f + __expf(-a)); }

}  // namespace

template <int THREADS, int VEC>
__global__ void __launch_bounds__(THREADS)
    swiglu_packs(__nv_bfloat16* __restrict__ out, const __nv_bfloat16* __restrict__ x, int tokens,
                 int width) {
  using word = typename blaster_common::bf16_word<VEC>::type;
  const int first = static_cast<int>(blockIdx.x * THREADS + threadIdx.x) * VEC;
  if (first >= width) return;
  const bool packs = VEC > 1 && width % VEC == 0 && aligned16(x, out);
  // gridDim.y is min(T, 65535): more tokens than that take turns.
#pragma unroll 1
  for (int t = blockIdx.y; t < tokens; t += gridDim.y) {
    const __nv_bfloat16* gate = x + static_cast<long long>(t) * 2 * width + first;
    const __nv_bfloat16* up = gate + width;
    __nv_bfloat16* to = out + static_cast<long long>(t) * width + first;
    if (packs) {
      bf16_pack<VEC> g, u, o;
      g.v = __ldcs(reinterpret_cast<const word*>(gate));
      u.v = __ldcs(reinterpret_cast<const word*>(up));
#pragma unroll
      for (int k = 0; k < VEC / 2; ++k) {
        const float2 fg = __bfloat1622float2(g.h2[k]);
        const float2 fu = __bfloat1622float2(u.h2[k]);
        o.h2[k] = __floats2bfloat162_rn(silu(fg.x) * fu.x, silu(fg.y) * fu.y);
      }
      __stcs(reinterpret_cast<word*>(to), o.v);
      continue;
    }
    // Both loads before the exponential, so the two reads overlap rather than queue. Kept
    // rolled: the register count is the whole kernel's, and an unrolled copy of this path for
    // odd rows would cost the packed path occupancy.
#pragma unroll 1
    for (int j = 0; j < VEC && first + j < width; ++j) {
      const float g = __bfloat162float(__ldcs(gate + j));
      const float u = __bfloat162float(__ldcs(up + j));
      __stcs(to + j, __float2bfloat16(silu(g) * u));
    }
  }
}
