/* blaster
{
  "launch": [
    {"kernel": "rms_norm_naive", "grid": "T", "block": 256,
     "args": ["out", "x", "weight", "H", "eps"]}
  ]
}
*/
// The first version a newcomer writes: one block per token, the sum of squares reduced through
// shared memory, then each thread scales a strided share of the token.
#include <cuda_bf16.h>

extern "C" __global__ void rms_norm_naive(__nv_bfloat16* out, const __nv_bfloat16* x,
                                          const __nv_bfloat16* weight, int hidden, float eps) {
  __shared__ float partial[256];
  const long long row = static_cast<long long>(blockIdx.x) * hidden;
  float sum = 0.0f;
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
    const float v = __bfloat162float(x[row + j]);
    sum += v * v;
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  const float scale = rsqrtf(partial[0] / hidden + eps);
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
    out[row + j] =
        __float2bfloat16(__bfloat162float(x[row + j]) * scale * __bfloat162float(weight[j]));
  }
}
