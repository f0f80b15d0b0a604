/* blaster
{
  "launch": [
    {"kernel": "fused_add_rms_norm_naive", "grid": "T", "block": 256,
     "args": ["out", "residual_out", "x", "residual", "weight", "H", "eps"]}
  ]
}
*/
// The first version a newcomer writes: one block per token; each thread adds and stores a strided
// share of the token and sums its squares, reduced through shared memory; then each thread reads
// back the sums it stored and scales them.
#include <cuda_bf16.h>

extern "C" __global__ void fused_add_rms_norm_naive(__nv_bfloat16* out, __nv_bfloat16* residual_out,
                                                    const __nv_bfloat16* x,
                                                    const __nv_bfloat16* residual,
                                                    const __nv_bfloat16* weight, int hidden,
                                                    float eps) {
  __shared__ float partial[256];
  const long long row = static_cast<long long>(blockIdx.x) * hidden;
  float sum = 0.0f;
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
    const float v = __bfloat162float(x[row + j]) + __bfloat162float(residual[row + j]);
    residual_out[row + j] = __float2bfloat16(v);
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
    out[row + j] = __float2bfloat16(__bfloat162float(residual_out[row + j]) * scale *
                                    __bfloat162float(weight[j]));
  }
}
