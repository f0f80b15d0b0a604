/* blaster
{
  "launch": [
    {"kernel": "rms_norm_cub<THREADS>", "grid": "T", "block": "THREADS",
     "args": ["out", "x", "weight", "H", "eps"]}
  ],
  "params": {"THREADS": [256]}
}
*/
// Style: CUB, as inference engines write their norms: a block per token, the sum of squares
// reduced by cub::BlockReduce (warp reductions, then the warps' sums in a fixed order: no
// atomics, the same bits on every run), its result, valid in thread 0, handed to the block
// through shared memory. Pairs of bf16 move as one 4-byte word where every row starts on one
// (H even, x, out and weight 4-byte aligned, checked at run time); otherwise one at a time.
#include <cub/block/block_reduce.cuh>
#include <cuda_bf16.h>

template <int THREADS>
__global__ void __launch_bounds__(THREADS)
    rms_norm_cub(__nv_bfloat16* __restrict__ out, const __nv_bfloat16* __restrict__ x,
                 const __nv_bfloat16* __restrict__ weight, int hidden, float eps) {
  using reduce = cub::BlockReduce<float, THREADS>;
  __shared__ typename reduce::TempStorage storage;
  __shared__ float total;

  const long long start = static_cast<long long>(blockIdx.x) * hidden;
  const __nv_bfloat16* in = x + start;
  __nv_bfloat16* to = out + start;
  const bool pairs =
      hidden % 2 == 0 &&
      ((reinterpret_cast<unsigned long long>(x) | reinterpret_cast<unsigned long long>(out) |
        reinterpret_cast<unsigned long long>(weight)) %
       4) == 0;

  float sum = 0.0f;
  if (pairs) {
    const __nv_bfloat162* from = reinterpret_cast<const __nv_bfloat162*>(in);
    for (int q = threadIdx.x; q < hidden / 2; q += THREADS) {
      const float2 f = __bfloat1622float2(from[q]);
      sum = fmaf(f.x, f.x, fmaf(f.y, f.y, sum));
    }
  } else {
    for (int j = threadIdx.x; j < hidden; j += THREADS) {
      const float v = __bfloat162float(in[j]);
      sum = fmaf(v, v, sum);
    }
  }
  const float block = reduce(storage).Sum(sum);
  if (threadIdx.x == 0) total = block;
  __syncthreads();
  const float scale = rsqrtf(total / hidden + eps);

  if (pairs) {
    const __nv_bfloat162* from = reinterpret_cast<const __nv_bfloat162*>(in);
    const __nv_bfloat162* w = reinterpret_cast<const __nv_bfloat162*>(weight);
    __nv_bfloat162* dst = reinterpret_cast<__nv_bfloat162*>(to);
    for (int q = threadIdx.x; q < hidden / 2; q += THREADS) {
      const float2 f = __bfloat1622float2(from[q]);
      const float2 g = __bfloat1622float2(w[q]);
      dst[q] = __floats2bfloat162_rn(f.x * scale * g.x, f.y * scale * g.y);
    }
  } else {
    for (int j = threadIdx.x; j < hidden; j += THREADS) {
      to[j] = __float2bfloat16(__bfloat162float(in[j]) * scale * __bfloat162float(weight[j]));
    }
  }
}
