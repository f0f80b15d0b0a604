/* blaster
{
  "launch": [
    {"kernel": "rms_norm_regs<THREADS, 512 / THREADS>", "grid": "T", "block": "THREADS",
     "args": ["out", "x", "weight", "H", "eps"]}
  ],
  "params": {"THREADS": [128, 256, 512]}
}
*/
// One block per token and one read of x: each thread keeps its PACKS 16-byte packs of the token
// in registers from the sum of squares to the store (THREADS * PACKS * 8 = 4096 holds a
// Llama-3-8B token whole); a longer token reads the rest again. Rows that are not whole
// packs take the same math one element at a time.
#include <cuda_bf16.h>

#include "common/bf16_pack.cuh"
#include "common/block_reduce.cuh"

using blaster_common::aligned16;
using blaster_common::bf16x8;
using blaster_common::block_sum;
using blaster_common::scaled_by_weight;

template <int THREADS, int PACKS>
__global__ void __launch_bounds__(THREADS)
    rms_norm_regs(__nv_bfloat16* __restrict__ out, const __nv_bfloat16* __restrict__ x,
                  const __nv_bfloat16* __restrict__ weight, int hidden, float eps) {
  __shared__ float scratch[THREADS / 32];
  const long long row = static_cast<long long>(blockIdx.x) * hidden;
  const bool vector = hidden % 8 == 0 && aligned16(x, out, weight);
  const int packs = vector ? hidden / 8 : 0;
  const uint4* from = reinterpret_cast<const uint4*>(x + row);
  uint4* to = reinterpret_cast<uint4*>(out + row);
  const uint4* w = reinterpret_cast<const uint4*>(weight);

  auto squares = [](const bf16x8& p) {
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float2 f = __bfloat1622float2(p.h2[k]);
      s = fmaf(f.x, f.x, fmaf(f.y, f.y, s));
    }
    return s;
  };
  bf16x8 held[PACKS];
  float sum = 0.0f;
#pragma unroll
  for (int j = 0; j < PACKS; ++j) {
    const int p = threadIdx.x + j * THREADS;
    if (p < packs) {
      held[j].v = __ldcs(from + p);  // x is read once: no reason to keep it in L2
      sum += squares(held[j]);
    }
  }
  for (int p = threadIdx.x + PACKS * THREADS; p < packs; p += THREADS) {
    bf16x8 u;
    u.v = from[p];
    sum += squares(u);
  }
  if (!vector) {
    for (int i = threadIdx.x; i < hidden; i += THREADS) {
      const float v = __bfloat162float(x[row + i]);
      sum = fmaf(v, v, sum);
    }
  }
  const float scale = rsqrtf(block_sum<THREADS>(sum, scratch) / hidden + eps);

  auto normalized = [&](const bf16x8& u, int p) {
    return scaled_by_weight(u.v, __ldg(w + p), scale);
  };
#pragma unroll
  for (int j = 0; j < PACKS; ++j) {
    const int p = threadIdx.x + j * THREADS;
    if (p < packs) __stcs(to + p, normalized(held[j], p));
  }
  for (int p = threadIdx.x + PACKS * THREADS; p < packs; p += THREADS) {
    bf16x8 u;
    u.v = from[p];
    __stcs(to + p, normalized(u, p));
  }
  if (!vector) {
    for (int i = threadIdx.x; i < hidden; i += THREADS) {
      out[row + i] =
          __float2bfloat16(__bfloat162float(x[row + i]) * scale * __bfloat162float(weight[i]));
    }
  }
}
