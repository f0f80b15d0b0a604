/* blaster
{
  "launch": [
    {"kernel": "pads_its_scratch", "grid": "T", "block": 256,
     "args": ["out", "x", "weight", "H", "eps"]}
  ],
  "scratch": {"pad": "134217728"}
}
*/
// Cheat, aimed at the rotation: the baseline's work, plus 128 MiB of scratch it never touches.
// Were scratch counted in what a buffer set holds, every set would seem to span the L2 already,
// the launches would run over one set with their inputs left in the cache, and the floor would
// be the L2's rather than DRAM's.
// expect: passed
#include <cuda_bf16.h>

extern "C" __global__ void pads_its_scratch(__nv_bfloat16* out, const __nv_bfloat16* x,
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
