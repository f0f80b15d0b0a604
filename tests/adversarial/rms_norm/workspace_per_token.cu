/* blaster
{
  "launch": [
    {"kernel": "workspace_per_token", "grid": "T", "block": 256,
     "args": ["out", "x", "weight", "partial", "H", "eps"]}
  ],
  "scratch": {"partial": "T * H * 256"}
}
*/
// Cheat, aimed at the rotation and dressed as a workspace: "partial" is sized like a per-token
// buffer of partial sums, 128 times the input, and the kernel keeps one word of it per token.
// Counted in what a buffer set holds, it would cut the rotation to one set at every size.
// expect: passed
#include <cuda_bf16.h>

#include "common/block_reduce.cuh"

using blaster_common::block_sum;

extern "C" __global__ void workspace_per_token(__nv_bfloat16* out, const __nv_bfloat16* x,
                                               const __nv_bfloat16* weight, float* partial,
                                               int hidden, float eps) {
  __shared__ float warp_sums[256 / 32];
  const long long row = static_cast<long long>(blockIdx.x) * hidden;
  float sum = 0.0f;
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
    const float v = __bfloat162float(x[row + j]);
    sum += v * v;
  }
  const float total = block_sum<256>(sum, warp_sums);
  if (threadIdx.x == 0) partial[row] = total;
  const float scale = rsqrtf(total / hidden + eps);
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
    out[row + j] =
        __float2bfloat16(__bfloat162float(x[row + j]) * scale * __bfloat162float(weight[j]));
  }
}
