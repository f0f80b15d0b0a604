/* blaster
{
  "launch": [
    {"kernel": "fused_add_rms_norm_regs<THREADS, 512 / THREADS>", "grid": "T", "block": "THREADS",
     "args": ["out", "residual_out", "x", "residual", "weight", "H", "eps"]}
  ],
  "params": {"THREADS": [128, 256, 512]}
}
*/
// One block per token, x and the residual read once: each thread adds its PACKS 16-byte packs,
// stores the sum and keeps it (as stored, in bf16) in registers until the token's scale is known;
// a longer token reads the stored sums back. Rows that are not whole packs take the same math
// one element at a time.
#include <cuda_bf16.h>

#include "common/bf16_pack.cuh"
#include "common/block_reduce.cuh"

using blaster_common::aligned16;
using blaster_common::bf16x8;
using blaster_common::block_sum;
using blaster_common::scaled_by_weight;

template <int THREADS, int PACKS>
__global__ void __launch_bounds__(THREADS)
    fused_add_rms_norm_regs(__nv_bfloat16* __restrict__ out,
                            __nv_bfloat16* __restrict__ residual_out,
                            const __nv_bfloat16* __restrict__ x,
                            const __nv_bfloat16* __restrict__ residual,
                            const __nv_bfloat16* __restrict__ weight, int hidden, float eps) {
  __shared__ float scratch[THREADS / 32];
  const long long row = static_cast<long long>(blockIdx.x) * hidden;
  const bool vector =
      hidden % 8 == 0 && aligned16(out, residual_out, x, residual) && aligned16(weight, weight);
  const int packs = vector ? hidden / 8 : 0;
  const uint4* a = reinterpret_cast<const uint4*>(x + row);
  const uint4* b = reinterpret_cast<const uint4*>(residual + row);
  uint4* sums = reinterpret_cast<uint4*>(residual_out + row);
  uint4* to = reinterpret_cast<uint4*>(out + row);
  const uint4* w = reinterpret_cast<const uint4*>(weight);

  // x + residual for pack p, stored, and its squares (of the sum before rounding) added to s.
  auto add = [&](int p, float& s) {
    bf16x8 u, v, z;
    u.v = __ldcs(a + p);
    v.v = __ldcs(b + p);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float2 f = __bfloat1622float2(u.h2[k]);
      const float2 g = __bfloat1622float2(v.h2[k]);
      const float2 sum = make_float2(f.x + g.x, f.y + g.y);
      s = fmaf(sum.x, sum.x, fmaf(sum.y, sum.y, s));
      z.h2[k] = __floats2bfloat162_rn(sum.x, sum.y);
    }
    sums[p] = z.v;
    return z.v;
  };
  bf16x8 held[PACKS];
  float squares = 0.0f;
#pragma unroll
  for (int j = 0; j < PACKS; ++j) {
    const int p = threadIdx.x + j * THREADS;
    if (p < packs) held[j].v = add(p, squares);
  }
  for (int p = threadIdx.x + PACKS * THREADS; p < packs; p += THREADS) add(p, squares);
  if (!vector) {
    for (int i = threadIdx.x; i < hidden; i += THREADS) {
      const float v = __bfloat162float(x[row + i]) + __bfloat162float(residual[row + i]);
      residual_out[row + i] = __float2bfloat16(v);
      squares = fmaf(v, v, squares);
    }
  }
  const float scale = rsqrtf(block_sum<THREADS>(squares, scratch) / hidden + eps);

  // The stored sum of pack p, scaled and weighted, to out.
  auto store = [&](int p, uint4 stored) {
    __stcs(to + p, scaled_by_weight(stored, __ldg(w + p), scale));
  };
#pragma unroll
  for (int j = 0; j < PACKS; ++j) {
    const int p = threadIdx.x + j * THREADS;
    if (p < packs) store(p, held[j].v);
  }
  for (int p = threadIdx.x + PACKS * THREADS; p < packs; p += THREADS) {
    store(p, sums[p]);  // this thread's own store, above
  }
  if (!vector) {
    for (int i = threadIdx.x; i < hidden; i += THREADS) {
      out[row + i] = __float2bfloat16(__bfloat162float(residual_out[row + i]) * scale *
                                      __bfloat162float(weight[i]));
    }
  }
}
