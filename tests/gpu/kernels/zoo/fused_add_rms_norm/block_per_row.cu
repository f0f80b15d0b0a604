/* blaster
{
  "launch": [
    {"kernel": "fused_add_rms_norm_block_row<THREADS>", "grid": "T", "block": "THREADS",
     "args": ["out", "residual_out", "x", "residual", "weight", "H", "eps"]}
  ],
  "params": {"THREADS": [256]}
}
*/
// Style: a block per row. Each block owns a token: its threads add x and the residual in
// 16-byte packs, store the sum to residual_out and add its squares; after the block's
// reduction each thread reads back the packs it stored itself in this launch (its own earlier
// stores, never another launch's: every pack is written before it is read) and scales them.
// Packs only where every row starts on one: H a multiple of 8 and all five buffers 16-byte
// aligned (checked at run time); otherwise the same math one element at a time.
#include <cuda_bf16.h>

#include "common/bf16_pack.cuh"
#include "common/block_reduce.cuh"

using blaster_common::aligned16;
using blaster_common::bf16x8;
using blaster_common::block_sum;
using blaster_common::scaled_by_weight;

template <int THREADS>
__global__ void __launch_bounds__(THREADS)
    fused_add_rms_norm_block_row(__nv_bfloat16* __restrict__ out,
                                 __nv_bfloat16* __restrict__ residual_out,
                                 const __nv_bfloat16* __restrict__ x,
                                 const __nv_bfloat16* __restrict__ residual,
                                 const __nv_bfloat16* __restrict__ weight, int hidden,
                                 float eps) {
  __shared__ float scratch[THREADS / 32];
  const long long start = static_cast<long long>(blockIdx.x) * hidden;
  const bool packed =
      hidden % 8 == 0 && aligned16(out, residual_out, x, residual) && aligned16(weight, weight);

  float squares = 0.0f;
  if (packed) {
    const uint4* a = reinterpret_cast<const uint4*>(x + start);
    const uint4* b = reinterpret_cast<const uint4*>(residual + start);
    uint4* sums = reinterpret_cast<uint4*>(residual_out + start);
    for (int p = threadIdx.x; p < hidden / 8; p += THREADS) {
      bf16x8 u, v, s;
      u.v = a[p];
      v.v = b[p];
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const float2 f = __bfloat1622float2(u.h2[k]);
        const float2 g = __bfloat1622float2(v.h2[k]);
        const float2 sum = make_float2(f.x + g.x, f.y + g.y);
        squares = fmaf(sum.x, sum.x, fmaf(sum.y, sum.y, squares));
        s.h2[k] = __floats2bfloat162_rn(sum.x, sum.y);
      }
      sums[p] = s.v;
    }
  } else {
    for (int j = threadIdx.x; j < hidden; j += THREADS) {
      const float v = __bfloat162float(x[start + j]) + __bfloat162float(residual[start + j]);
      residual_out[start + j] = __float2bfloat16(v);
      squares = fmaf(v, v, squares);
    }
  }
  const float scale = rsqrtf(block_sum<THREADS>(squares, scratch) / hidden + eps);

  if (packed) {
    // Plain loads: these are this thread's own stores of this launch, which __ldg's
    // read-only path is not promised to see.
    const uint4* sums = reinterpret_cast<const uint4*>(residual_out + start);
    const uint4* w = reinterpret_cast<const uint4*>(weight);
    uint4* to = reinterpret_cast<uint4*>(out + start);
    for (int p = threadIdx.x; p < hidden / 8; p += THREADS) {
      to[p] = scaled_by_weight(sums[p], w[p], scale);
    }
  } else {
    for (int j = threadIdx.x; j < hidden; j += THREADS) {
      out[start + j] = __float2bfloat16(__bfloat162float(residual_out[start + j]) * scale *
                                        __bfloat162float(weight[j]));
    }
  }
}
