/* blaster
{
  "launch": [
    {"kernel": "per_token_quant_naive", "grid": "T", "block": 256,
     "args": ["q", "scale", "x", "H"]}
  ]
}
*/
// The first version a newcomer writes: one block per token, the absolute maximum reduced through
// shared memory, then each thread quantizes a strided share of the token.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

extern "C" __global__ void per_token_quant_naive(__nv_fp8_storage_t* q, float* scale,
                                                 const __nv_bfloat16* x, int hidden) {
  __shared__ float partial[256];
  const long long row = static_cast<long long>(blockIdx.x) * hidden;
  float absmax = 0.0f;
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
    absmax = fmaxf(absmax, fabsf(__bfloat162float(x[row + j])));
  }
  partial[threadIdx.x] = absmax;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      partial[threadIdx.x] = fmaxf(partial[threadIdx.x], partial[threadIdx.x + half]);
    }
    __syncthreads();
  }
  const float s = fmaxf(partial[0] / 448.0f, 1.0f / (448.0f * 512.0f));
  if (threadIdx.x == 0) scale[blockIdx.x] = s;
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
    const float v = __bfloat162float(x[row + j]) / s;
    q[row + j] = __nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3);
  }
}
