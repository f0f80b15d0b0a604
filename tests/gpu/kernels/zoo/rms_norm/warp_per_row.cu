/* blaster
{
  "launch": [
    {"kernel": "rms_norm_warp_row<WARPS>", "grid": "ceil_div(T, WARPS)", "block": "WARPS * 32",
     "args": ["out", "x", "weight", "T", "H", "eps"]}
  ],
  "params": {"WARPS": [8]}
}
*/
// Style: a warp per row. Each warp owns one token: its lanes stride over the row, a butterfly of
// shuffles sums the squares (the same bits in every lane, the same order on every run), then
// they scale the row, read again. A token past T leaves its whole warp idle, so every shuffle
// still has all 32 lanes. 16-byte packs only where every row starts on one: H a multiple of 8
// and x, out and weight 16-byte aligned (checked at run time); any other H, one element at a time.
#include <cuda_bf16.h>

#include "common/bf16_pack.cuh"
#include "common/warp_reduce.cuh"

using blaster_common::aligned16;
using blaster_common::bf16x8;
using blaster_common::scaled_by_weight;
using blaster_common::warp_sum;

template <int WARPS>
__global__ void __launch_bounds__(WARPS * 32)
    rms_norm_warp_row(__nv_bfloat16* __restrict__ out, const __nv_bfloat16* __restrict__ x,
                      const __nv_bfloat16* __restrict__ weight, int tokens, int hidden,
                      float eps) {
  const int lane = threadIdx.x % 32;
  const int row = blockIdx.x * WARPS + threadIdx.x / 32;
  if (row >= tokens) return;  // the same in all 32 lanes of the warp
  const long long start = static_cast<long long>(row) * hidden;
  const __nv_bfloat16* in = x + start;
  __nv_bfloat16* to = out + start;
  const bool packed = hidden % 8 == 0 && aligned16(x, out, weight);

  float sum = 0.0f;
  if (packed) {
    const uint4* from = reinterpret_cast<const uint4*>(in);
    for (int p = lane; p < hidden / 8; p += 32) {
      bf16x8 u;
      u.v = from[p];
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const float2 f = __bfloat1622float2(u.h2[k]);
        sum = fmaf(f.x, f.x, fmaf(f.y, f.y, sum));
      }
    }
  } else {
    for (int j = lane; j < hidden; j += 32) {
      const float v = __bfloat162float(in[j]);
      sum = fmaf(v, v, sum);
    }
  }
  const float scale = rsqrtf(warp_sum(sum) / hidden + eps);

  if (packed) {
    const uint4* from = reinterpret_cast<const uint4*>(in);
    const uint4* w = reinterpret_cast<const uint4*>(weight);
    uint4* dst = reinterpret_cast<uint4*>(to);
    for (int p = lane; p < hidden / 8; p += 32) dst[p] = scaled_by_weight(from[p], w[p], scale);
  } else {
    for (int j = lane; j < hidden; j += 32) {
      to[j] = __float2bfloat16(__bfloat162float(in[j]) * scale * __bfloat162float(weight[j]));
    }
  }
}
