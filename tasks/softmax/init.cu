/* blaster
{
  "launch": [
    {"kernel": "softmax_naive", "grid": "B", "block": 256, "args": ["out", "x", "B", "D"]}
  ]
}
*/
// The first version a newcomer writes: one block per row and three passes over it (the max, the
// sum of exponentials, the normalized values), each reduction a tree in shared memory.
#include <cuda_fp16.h>

extern "C" __global__ void softmax_naive(__half* out, const __half* x, int rows, int length) {
  __shared__ float partial[256];
  const __half* in = x + static_cast<long long>(blockIdx.x) * length;
  __half* to = out + static_cast<long long>(blockIdx.x) * length;

  float m = __int_as_float(0xff800000);  // -infinity: a thread with no element stays neutral
  for (int j = threadIdx.x; j < length; j += blockDim.x) m = fmaxf(m, __half2float(in[j]));
  partial[threadIdx.x] = m;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      partial[threadIdx.x] = fmaxf(partial[threadIdx.x], partial[threadIdx.x + stride]);
    }
    __syncthreads();
  }
  m = partial[0];
  __syncthreads();

  float sum = 0.0f;
  for (int j = threadIdx.x; j < length; j += blockDim.x) sum += expf(__half2float(in[j]) - m);
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  sum = partial[0];

  for (int j = threadIdx.x; j < length; j += blockDim.x) {
    to[j] = __float2half(expf(__half2float(in[j]) - m) / sum);
  }
}
