/* blaster
{
  "launch": [
    {"kernel": "fused_add_rms_norm_warp_row<WARPS>", "grid": "ceil_div(T, WARPS)",
     "block": "WARPS * 32",
     "args": ["out", "residual_out", "x", "residual", "weight", "T", "H", "eps"]}
  ],
  "params": {"WARPS": [4]}
}
*/
// Style: a warp per row. Each warp owns a token: its lanes add x and the residual a bf16 pair
// at a time (a 4-byte word, where H is even and all five buffers 4-byte aligned, checked at run
// time; otherwise one element at a time), store the sum to residual_out and add its squares;
// a butterfly of shuffles gives every lane the same total; then each lane reads back the pairs
// it stored itself in this launch and scales them. A token past T leaves its whole warp idle.
#include <cuda_bf16.h>

#include "common/bf16_pack.cuh"
#include "common/warp_reduce.cuh"

using blaster_common::aligned_to;
using blaster_common::warp_sum;

template <int WARPS>
__global__ void __launch_bounds__(WARPS * 32)
    fused_add_rms_norm_warp_row(__nv_bfloat16* __restrict__ out,
                                __nv_bfloat16* __restrict__ residual_out,
                                const __nv_bfloat16* __restrict__ x,
                                const __nv_bfloat16* __restrict__ residual,
                                const __nv_bfloat16* __restrict__ weight, int tokens, int hidden,
                                float eps) {
  const int lane = threadIdx.x % 32;
  const int row = blockIdx.x * WARPS + threadIdx.x / 32;
  if (row >= tokens) return;  // the same in all 32 lanes of the warp
  const long long start = static_cast<long long>(row) * hidden;
  const bool pairs =
      hidden % 2 == 0 && aligned_to<4>(out, residual_out, x, residual, weight);

  float squares = 0.0f;
  if (pairs) {
    const __nv_bfloat162* a = reinterpret_cast<const __nv_bfloat162*>(x + start);
    const __nv_bfloat162* b = reinterpret_cast<const __nv_bfloat162*>(residual + start);
    __nv_bfloat162* sums = reinterpret_cast<__nv_bfloat162*>(residual_out + start);
    for (int q = lane; q < hidden / 2; q += 32) {
      const float2 f = __bfloat1622float2(a[q]);
      const float2 g = __bfloat1622float2(b[q]);
      const float2 sum = make_float2(f.x + g.x, f.y + g.y);
      squares = fmaf(sum.x, sum.x, fmaf(sum.y, sum.y, squares));
      sums[q] = __floats2bfloat162_rn(sum.x, sum.y);
    }
  } else {
    for (int j = lane; j < hidden; j += 32) {
      const float v = __bfloat162float(x[start + j]) + __bfloat162float(residual[start + j]);
      residual_out[start + j] = __float2bfloat16(v);
      squares = fmaf(v, v, squares);
    }
  }
  const float scale = rsqrtf(warp_sum(squares) / hidden + eps);

  if (pairs) {
    const __nv_bfloat162* sums = reinterpret_cast<const __nv_bfloat162*>(residual_out + start);
    const __nv_bfloat162* w = reinterpret_cast<const __nv_bfloat162*>(weight);
    __nv_bfloat162* to = reinterpret_cast<__nv_bfloat162*>(out + start);
    for (int q = lane; q < hidden / 2; q += 32) {
      const float2 s = __bfloat1622float2(sums[q]);
      const float2 g = __bfloat1622float2(w[q]);
      to[q] = __floats2bfloat162_rn(s.x * scale * g.x, s.y * scale * g.y);
    }
  } else {
    for (int j = lane; j < hidden; j += 32) {
      out[start + j] = __float2bfloat16(__bfloat162float(residual_out[start + j]) * scale *
                                        __bfloat162float(weight[j]));
    }
  }
}
