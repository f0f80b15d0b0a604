/* blaster
{
  "launch": [
    {"kernel": "fused_add_rms_norm_rows<THREADS>", "grid": "min(T, SMS * PER_SM)",
     "block": "THREADS",
     "args": ["out", "residual_out", "x", "residual", "weight", "T", "H", "eps"]}
  ],
  "params": {"SMS": [132], "PER_SM": [2], "THREADS": [256]}
}
*/
// Style: persistent grid. At most SMS*PER_SM blocks loop over the tokens: token t is done by
// block t mod grid, for every t below T, which the loop reads from the arguments on every
// launch; so although the grid is smaller than the output, no launch can leave a token out.
// Per token the block adds x and the residual one element at a time (any H, any alignment),
// stores the sum to residual_out, reduces the squares and scales the sums it stored itself in
// this launch. The loop's bound is the same in the whole block, so every thread meets every
// barrier of the reduction.
#include <cuda_bf16.h>

#include "common/block_reduce.cuh"

using blaster_common::block_sum;

template <int THREADS>
__global__ void __launch_bounds__(THREADS)
    fused_add_rms_norm_rows(__nv_bfloat16* __restrict__ out,
                            __nv_bfloat16* __restrict__ residual_out,
                            const __nv_bfloat16* __restrict__ x,
                            const __nv_bfloat16* __restrict__ residual,
                            const __nv_bfloat16* __restrict__ weight, int tokens, int hidden,
                            float eps) {
  __shared__ float scratch[THREADS / 32];
  for (int t = blockIdx.x; t < tokens; t += gridDim.x) {
    const long long start = static_cast<long long>(t) * hidden;
    float squares = 0.0f;
    for (int j = threadIdx.x; j < hidden; j += THREADS) {
      const float v = __bfloat162float(x[start + j]) + __bfloat162float(residual[start + j]);
      residual_out[start + j] = __float2bfloat16(v);
      squares = fmaf(v, v, squares);
    }
    // block_sum synchronizes before it returns: scratch is free for the next token.
    const float scale = rsqrtf(block_sum<THREADS>(squares, scratch) / hidden + eps);
    for (int j = threadIdx.x; j < hidden; j += THREADS) {
      out[start + j] = __float2bfloat16(__bfloat162float(residual_out[start + j]) * scale *
                                        __bfloat162float(weight[j]));
    }
  }
}
