/* blaster
{
  "launch": [
    {"kernel": "matvec_naive", "grid": "M", "block": 256,
     "args": ["out", "A", "B", "M", "K"]}
  ]
}
*/
// The first version a newcomer writes, from the textbook reduction: one block per output row,
// each thread adding every 256th product of the row in float, then a tree in shared memory.
// One half per load, and a row per block leaves most of the GPU idle when rows are few.
#include <cuda_fp16.h>

extern "C" __global__ void matvec_naive(__half* out, const __half* a, const __half* b, int rows,
                                        int depth) {
  __shared__ float partial[256];
  const long long m = blockIdx.x;
  if (m >= rows) return;
  const __half* row = a + m * depth;
  float sum = 0.0f;
  for (int k = threadIdx.x; k < depth; k += blockDim.x) {
    sum += __half2float(row[k]) * __half2float(b[k]);
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[m] = __float2half(partial[0]);
}
