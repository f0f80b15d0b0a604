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

extern "C" __global__ void workspace_per_token(__nv_bfloat16* out, const __nv_bfloat16* x,
                                               const __nv_bfloat16* weight, float* partial,
                                               int hidden, float eps) {
  __shared__ float sums[256];
  const long long row = static_cast<long long>(blockIdx.x) * hidden;
  float sum = 0.0f;
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
    const float v = __bfloat162float(x[row + j]);
    sum += v * v;
  }
  sums[threadIdx.x] = sum;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) sums[threadIdx.x] += sums[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[row] = sums[0];
  const float scale = rsqrtf(sums[0] / hidden + eps);
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
    out[row + j] =
        __float2bfloat16(__bfloat162float(x[row + j]) * scale * __bfloat162float(weight[j]));
  }
}
