/* blaster
{
  "launch": [
    {"kernel": "rope_packs<THREADS, HEADS, PAIRS>",
     "grid": "ceil_div(T * ceil_div(QH + KH, HEADS) * ceil_div(D / 2, PAIRS), THREADS)",
     "block": "THREADS",
     "args": ["q_out", "k_out", "q", "k", "cos_sin", "positions", "T", "QH", "KH", "D"]}
  ],
  "params": {"THREADS": [256, 128, 64], "HEADS": [2, 4, 1], "PAIRS": [8, 2, 1]}
}
*/
// A thread per PAIRS rotation pairs of HEADS heads of one token: loads of 2 * PAIRS bytes of each
// head's two halves and of the token's cos and sin (read once, kept in registers for all HEADS
// heads), streaming stores, and one flat index over (token, head group, pack) so no thread idles
// whatever the head count. Every load of a thread is issued before its first use, so HEADS sets
// the bytes in flight per thread: more for long prefills, HEADS = 1 for the most threads at one
// token. PAIRS = 8 (16-byte accesses) moves a prefill with the fewest instructions; PAIRS = 2 or 1
// gives one token four or eight times the threads and a short chain of math per thread, which
// is what a launch-bound decode waits on. Heads that are not whole packs take the same math one
// element at a time.
#include <cuda_bf16.h>

#include "common/bf16_pack.cuh"

using blaster_common::aligned_to;
using blaster_common::bf16_pack;

namespace {

// n / d and n % d for a divisor the whole grid shares. The general 32-bit division is a chain of
// about fifteen dependent instructions ahead of every load of the thread; a divisor that is a
// power of two (a head of 2^k packs) takes a shift and a mask, and a quotient of 0 (every item of
// a single token) takes none.
__device__ __forceinline__ void divide(unsigned n, unsigned d, unsigned& q, unsigned& r) {
  if (n < d) {
    q = 0;
    r = n;
  } else if ((d & (d - 1)) == 0) {
    q = n >> (__ffs(d) - 1);
    r = n & (d - 1);
  } else {
    q = n / d;
    r = n - q * d;
  }
}

}  // namespace

template <int THREADS, int HEADS, int PAIRS>
__global__ void __launch_bounds__(THREADS)
    rope_packs(__nv_bfloat16* __restrict__ q_out, __nv_bfloat16* __restrict__ k_out,
               const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
               const __nv_bfloat16* __restrict__ cos_sin, const int* __restrict__ positions,
               int tokens, int q_heads, int k_heads, int dim) {
  using word = typename blaster_common::bf16_word<PAIRS>::type;
  const int half = dim / 2;
  const unsigned per_half = (half + PAIRS - 1) / PAIRS;  // packs of PAIRS pairs per head
  const unsigned groups = (q_heads + k_heads + HEADS - 1) / HEADS;
  // The plan's grid keeps this below T * groups * per_half + THREADS, far inside 32 bits.
  const unsigned item = blockIdx.x * THREADS + threadIdx.x;
  unsigned j, rest, group, t;
  if (PAIRS < 8) {
    divide(item, per_half, rest, j);
    divide(rest, groups, t, group);
  } else {
    // A prefill's 16-byte packs are bound by memory, not by this arithmetic.
    j = item % per_half;
    rest = item / per_half;
    group = rest % groups;
    t = rest / groups;
  }
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
  const int first = static_cast<int>(j) * PAIRS;
  const __nv_bfloat16* cache = cos_sin + static_cast<long long>(__ldg(positions + t)) * dim;

  if (dim % (2 * PAIRS) == 0 && aligned_to<2 * PAIRS>(q, k, q_out, k_out, cos_sin)) {
    bf16_pack<PAIRS> lo[HEADS], hi[HEADS];
    __nv_bfloat16* to[HEADS];
#pragma unroll
    for (int r = 0; r < HEADS; ++r) {
      if (r < heads) {
        const __nv_bfloat16* from;
        rows(first_head + r, from, to[r]);
        lo[r].v = __ldcs(reinterpret_cast<const word*>(from + first));  // read once
        hi[r].v = __ldcs(reinterpret_cast<const word*>(from + half + first));
      }
    }
    bf16_pack<PAIRS> c, s;
    c.v = __ldg(reinterpret_cast<const word*>(cache + first));  // shared by the token's heads
    s.v = __ldg(reinterpret_cast<const word*>(cache + half + first));
    if constexpr (PAIRS == 1) {
      const float fc = __bfloat162float(c.h[0]);
      const float fs = __bfloat162float(s.h[0]);
#pragma unroll
      for (int r = 0; r < HEADS; ++r) {
        if (r < heads) {
          const float x = __bfloat162float(lo[r].h[0]);
          const float y = __bfloat162float(hi[r].h[0]);
          bf16_pack<1> a, b;
          a.h[0] = __float2bfloat16(fmaf(x, fc, -y * fs));
          b.h[0] = __float2bfloat16(fmaf(y, fc, x * fs));
          __stcs(reinterpret_cast<word*>(to[r] + first), a.v);
          __stcs(reinterpret_cast<word*>(to[r] + half + first), b.v);
        }
      }
    } else {
      float2 fc[PAIRS / 2], fs[PAIRS / 2];
#pragma unroll
      for (int p = 0; p < PAIRS / 2; ++p) {
        fc[p] = __bfloat1622float2(c.h2[p]);
        fs[p] = __bfloat1622float2(s.h2[p]);
      }
#pragma unroll
      for (int r = 0; r < HEADS; ++r) {
        if (r < heads) {
          bf16_pack<PAIRS> a, b;
#pragma unroll
          for (int p = 0; p < PAIRS / 2; ++p) {
            const float2 x = __bfloat1622float2(lo[r].h2[p]);
            const float2 y = __bfloat1622float2(hi[r].h2[p]);
            a.h2[p] = __floats2bfloat162_rn(fmaf(x.x, fc[p].x, -y.x * fs[p].x),
                                            fmaf(x.y, fc[p].y, -y.y * fs[p].y));
            b.h2[p] = __floats2bfloat162_rn(fmaf(y.x, fc[p].x, x.x * fs[p].x),
                                            fmaf(y.y, fc[p].y, x.y * fs[p].y));
          }
          __stcs(reinterpret_cast<word*>(to[r] + first), a.v);
          __stcs(reinterpret_cast<word*>(to[r] + half + first), b.v);
        }
      }
    }
    return;
  }
  const int last = min(first + PAIRS, half);
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
