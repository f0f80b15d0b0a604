/* blaster
{
  "launch": [
    {"kernel": "pads_its_scratch", "grid": "T", "block": 256,
     "args": ["out", "x", "weight", "H", "eps"]}
  ],
  "scratch": {"pad": "134217728"}
}
*/
// Cheat, aimed at the rotation: an honest rms_norm, plus 128 MiB of scratch it never touches.
// Were scratch counted in what a buffer set holds, every set would seem to span the L2 already,
// the launches would run over one set with their inputs left in the cache, and the floor would
// be the L2's rather than DRAM's.
// expect: passed
#include <cuda_bf16.h>

#include "common/block_reduce.cuh"

using blaster_common::block_sum;

extern "C" __global__ void pads_its_scratch(__nv_bfloat16* out, const __nv_bfloat16* x,
                                            const __nv_bfloat16* weight, int hidden, float eps) {
  __shared__ float warp_sums[256 / 32];
  const long long row = static_cast<long long>(blockIdx.x) * hidden;
  float sum = 0.0f;
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
    const float v = __bfloat162float(x[row + j]);
    sum += v * v;
  }
  const float scale = rsqrtf(block_sum<256>(sum, warp_sums) / hidden + eps);
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
    out[row + j] =
        __float2bfloat16(__bfloat162float(x[row + j]) * scale * __bfloat162float(weight[j]));
  }
}
