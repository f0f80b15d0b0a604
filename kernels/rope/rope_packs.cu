/* blaster
{
  "launch": [
    {"kernel": "rope_packs<THREADS, HEADS>",
     "grid": "ceil_div(T * ceil_div(QH + KH, HEADS) * ceil_div(D / 2, 8), THREADS)",
     "block": "THREADS",
     "args": ["q_out", "k_out", "q", "k", "cos_sin", "positions", "T", "QH", "KH", "D"]}
  ],
  "params": {"THREADS": [256, 128, 64], "HEADS": [2, 4, 1]}
}
*/
// A thread per eight rotation pairs of HEADS heads of one token: 16-byte loads of each head's
// two halves and of the token's cos and sin (read once, kept in registers for all HEADS heads),
// 16-byte streaming stores, and one flat index over (token, head group, pack) so no thread idles
// whatever the head count. Every load of a thread is issued before its first use, so HEADS sets
// the bytes in flight per thread: more for long prefills, HEADS = 1 for the most threads at one
// token. Heads that are not whole packs take the same math one element at a time.
#include <cuda_bf16.h>

#include "common/bf16_pack.cuh"

using blaster_common::aligned16;
using blaster_common::bf16x8;

template <int THREADS, int HEADS>
__global__ void __launch_bounds__(THREADS)
    rope_packs(__nv_bfloat16* __restrict__ q_out, __nv_bfloat16* __restrict__ k_out,
               const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
               const __nv_bfloat16* __restrict__ cos_sin, const int* __restrict__ positions,
               int tokens, int q_heads, int k_heads, int dim) {
  const int half = dim / 2;
  const unsigned per_half = (half + 7) / 8;  // packs of 8 pairs per head
  const unsigned groups = (q_heads + k_heads + HEADS - 1) / HEADS;
  // The plan's grid keeps this below T * groups * per_half + THREADS, far inside 32 bits.
  const unsigned item = blockIdx.x * THREADS + threadIdx.x;
  const unsigned j = item % per_half;
  const unsigned rest = item / per_half;
  const unsigned group = rest % groups;
  const unsigned t = rest / groups;
  if (t >= static_cast<unsigned>(tokens)) return;

  // Head h of the token, q's heads first: its input and output rows.
  auto rows = [&](int h, const __nv_bfloat16*& from, __nv_bfloat16*& to) {
    const long long row = h < q_heads ? (static_cast<long long>(t) * q_heads + h) * dim
                                      : (static_cast<long long>(t) * k_heads + (h - q_heads)) * dim;
    from = (h < q_heads ? q : k) + row;
    to = (h < q_heads ? q_out : k_out) + row;
  };
  const int first_head = static_cast<int>(group) * HEADS;
  const int heads = min(HEADS, q_heads + k_heads - first_head);
  const int first = static_cast<int>(j) * 8;
  const __nv_bfloat16* cache = cos_sin + static_cast<long long>(__ldg(positions + t)) * dim;

  if (dim % 16 == 0 && aligned16(q, k, q_out, k_out) && aligned16(cos_sin, cos_sin)) {
    bf16x8 lo[HEADS], hi[HEADS];
    __nv_bfloat16* to[HEADS];
#pragma unroll
    for (int r = 0; r < HEADS; ++r) {
      if (r < heads) {
        const __nv_bfloat16* from;
        rows(first_head + r, from, to[r]);
        lo[r].v = __ldcs(reinterpret_cast<const uint4*>(from + first));  // read once
        hi[r].v = __ldcs(reinterpret_cast<const uint4*>(from + half + first));
      }
    }
    bf16x8 c, s;
    c.v = __ldg(reinterpret_cast<const uint4*>(cache + first));  // shared by the token's heads
    s.v = __ldg(reinterpret_cast<const uint4*>(cache + half + first));
    float2 fc[4], fs[4];
#pragma unroll
    for (int p = 0; p < 4; ++p) {
      fc[p] = __bfloat1622float2(c.h2[p]);
      fs[p] = __bfloat1622float2(s.h2[p]);
    }
#pragma unroll
    for (int r = 0; r < HEADS; ++r) {
      if (r < heads) {
        bf16x8 a, b;
#pragma unroll
        for (int p = 0; p < 4; ++p) {
          const float2 x = __bfloat1622float2(lo[r].h2[p]);
          const float2 y = __bfloat1622float2(hi[r].h2[p]);
          a.h2[p] = __floats2bfloat162_rn(fmaf(x.x, fc[p].x, -y.x * fs[p].x),
                                          fmaf(x.y, fc[p].y, -y.y * fs[p].y));
          b.h2[p] = __floats2bfloat162_rn(fmaf(y.x, fc[p].x, x.x * fs[p].x),
                                          fmaf(y.y, fc[p].y, x.y * fs[p].y));
        }
        __stcs(reinterpret_cast<uint4*>(to[r] + first), a.v);
        __stcs(reinterpret_cast<uint4*>(to[r] + half + first), b.v);
      }
    }
    return;
  }
  const int last = min(first + 8, half);
  for (int r = 0; r < heads; ++r) {
    const __nv_bfloat16* from;
    __nv_bfloat16* to;
    rows(first_head + r, from, to);
    for (int i = first; i < last; ++i) {
      const float c = __bfloat162float(cache[i]);
      const float s = __bfloat162float(cache[half + i]);
      const float x = __bfloat162float(from[i]);
      const float y = __bfloat162float(from[half + i]);
      to[i] = __float2bfloat16(fmaf(x, c, -y * s));
      to[half + i] = __float2bfloat16(fmaf(y, c, x * s));
    }
  }
}
