/* blaster
{
  "launch": [
    {"kernel": "fused_add_rms_norm_early<THREADS, 1024 / THREADS>", "grid": "T", "block": "THREADS",
     "args": ["out", "residual_out", "x", "residual", "weight", "H", "eps"]}
  ],
  "params": {"THREADS": [256, 512, 1024]}
}
*/
// One block per token, as fused_add_rms_norm_regs, but every load of the token is issued before
// any sum: x, the residual and the weight's packs together. A token alone (decode) then waits on
// memory once before its reduction and not again after it, where the weight would be read; and up
// to 1024 packs (a hidden size of 8192) stay in registers, so nothing is read back. Longer rows
// take the rest as fused_add_rms_norm_regs does; rows that are not whole packs go one element at
// a time.
#include <cuda_bf16.h>

#include "common/bf16_pack.cuh"
#include "common/block_reduce.cuh"

using blaster_common::aligned16;
using blaster_common::bf16x8;
using blaster_common::block_sum;
using blaster_common::scaled_by_weight;

// x + residual of one pack, its squares (of the sum before rounding) added to s; returns the sum
// rounded to bf16, as residual_out holds it.
__device__ __forceinline__ uint4 added(uint4 xs, uint4 rs, float& s) {
  bf16x8 u, v, z;
  u.v = xs;
  v.v = rs;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float2 f = __bfloat1622float2(u.h2[k]);
    const float2 g = __bfloat1622float2(v.h2[k]);
    const float2 sum = make_float2(f.x + g.x, f.y + g.y);
    s = fmaf(sum.x, sum.x, fmaf(sum.y, sum.y, s));
    z.h2[k] = __floats2bfloat162_rn(sum.x, sum.y);
  }
  return z.v;
}

// One block per SM is all the bound asks: without it ptxas held 1024 threads to 32 registers and
// spilled the packs they hold.
template <int THREADS, int PACKS>
__global__ void __launch_bounds__(THREADS, 1)
    fused_add_rms_norm_early(__nv_bfloat16* __restrict__ out,
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

  // Every load first, all in flight at once.
  uint4 xs[PACKS], rs[PACKS], ws[PACKS];
#pragma unroll
  for (int j = 0; j < PACKS; ++j) {
    const int p = threadIdx.x + j * THREADS;
    if (p < packs) {
      xs[j] = __ldcs(a + p);
      rs[j] = __ldcs(b + p);
      ws[j] = __ldg(w + p);
    }
  }
  float squares = 0.0f;
#pragma unroll
  for (int j = 0; j < PACKS; ++j) {
    const int p = threadIdx.x + j * THREADS;
    if (p < packs) {
      xs[j] = added(xs[j], rs[j], squares);  // xs[j] holds the sum from here
      sums[p] = xs[j];
    }
  }
  for (int p = threadIdx.x + PACKS * THREADS; p < packs; p += THREADS) {
    sums[p] = added(__ldcs(a + p), __ldcs(b + p), squares);
  }
  if (!vector) {
    for (int i = threadIdx.x; i < hidden; i += THREADS) {
      const float v = __bfloat162float(x[row + i]) + __bfloat162float(residual[row + i]);
      residual_out[row + i] = __float2bfloat16(v);
      squares = fmaf(v, v, squares);
    }
  }
  const float scale = rsqrtf(block_sum<THREADS>(squares, scratch) / hidden + eps);

#pragma unroll
  for (int j = 0; j < PACKS; ++j) {
    const int p = threadIdx.x + j * THREADS;
    if (p < packs) __stcs(to + p, scaled_by_weight(xs[j], ws[j], scale));
  }
  for (int p = threadIdx.x + PACKS * THREADS; p < packs; p += THREADS) {
    __stcs(to + p, scaled_by_weight(sums[p], __ldg(w + p), scale));  // this thread's own store
  }
  if (!vector) {
    for (int i = threadIdx.x; i < hidden; i += THREADS) {
      out[row + i] = __float2bfloat16(__bfloat162float(residual_out[row + i]) * scale *
                                      __bfloat162float(weight[i]));
    }
  }
}
