/* blaster
{
  "launch": [
    {"kernel": "swiglu_packs<THREADS, VEC>", "grid": "ceil_div(T * ceil_div(I, VEC), THREADS)",
     "block": "THREADS", "args": ["out", "x", "T", "I"]}
  ],
  "params": {"THREADS": [256, 128], "VEC": [8, 4, 2, 1]}
}
*/
// A thread per VEC outputs: one load of the gate, one of the up half and one store of 2 * VEC
// bytes each, silu through the fast exponential. VEC = 8 (16-byte accesses) moves a long prefill
// with the fewest instructions; VEC = 4, 2 or 1 gives one token two, four or eight times the
// threads and blocks, which is what a launch-bound decode needs. Rows that are not whole packs
// (and VEC = 1) take the same math one element at a time.
#include <cuda_bf16.h>

#include "common/bf16_pack.cuh"

using blaster_common::aligned16;

namespace {

__device__ __forceinline__ float silu(float a) { return a / (1.0f + __expf(-a)); }

// VEC bf16 values moved as one access of 2 * VEC bytes.
template <int VEC>
struct pack_word {
  using type = uint4;  // unused: VEC = 1 is element by element
};
template <>
struct pack_word<8> {
  using type = uint4;
};
template <>
struct pack_word<4> {
  using type = uint2;
};
template <>
struct pack_word<2> {
  using type = unsigned;
};

template <int VEC>
union bf16_pack {
  typename pack_word<VEC>::type v;
  __nv_bfloat162 h2[VEC > 1 ? VEC / 2 : 1];
};

}  // namespace

template <int THREADS, int VEC>
__global__ void __launch_bounds__(THREADS)
    swiglu_packs(__nv_bfloat16* __restrict__ out, const __nv_bfloat16* __restrict__ x, int tokens,
                 int width) {
  using word = typename pack_word<VEC>::type;
  const int per_row = (width + VEC - 1) / VEC;
  const long long pack = static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x;
  if (pack >= static_cast<long long>(tokens) * per_row) return;
  const long long t = pack / per_row;
  const int first = static_cast<int>(pack % per_row) * VEC;
  const __nv_bfloat16* gate = x + t * 2 * width + first;
  const __nv_bfloat16* up = gate + width;
  __nv_bfloat16* to = out + t * width + first;
  if (VEC > 1 && width % VEC == 0 && aligned16(x, out)) {
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
    return;
  }
  for (int j = 0; j < VEC && first + j < width; ++j) {
    to[j] = __float2bfloat16(silu(__bfloat162float(gate[j])) * __bfloat162float(up[j]));
  }
}
