/* blaster
{
  "launch": [
    {"kernel": "layernorm_naive", "grid": "B", "block": 256,
     "args": ["out", "x", "weight", "bias", "B", "C*H*W", "eps"]}
  ]
}
*/
// The first version a newcomer writes: one block per row and three passes over it (the mean, the
// variance around it, the normalized values), each reduction a tree in shared memory.
#include <cuda_fp16.h>

__device__ float block_sum(float v, float* partial) {
  partial[threadIdx.x] = v;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  const float total = partial[0];
  __syncthreads();  // partial is reused by the next reduction
  return total;
}

extern "C" __global__ void layernorm_naive(__half* out, const __half* x, const __half* weight,
                                           const __half* bias, int rows, int length, float eps) {
  __shared__ float partial[256];
  const __half* in = x + static_cast<long long>(blockIdx.x) * length;
  __half* to = out + static_cast<long long>(blockIdx.x) * length;

  float sum = 0.0f;
  for (int j = threadIdx.x; j < length; j += blockDim.x) sum += __half2float(in[j]);
  const float mean = block_sum(sum, partial) / length;

  float squares = 0.0f;
  for (int j = threadIdx.x; j < length; j += blockDim.x) {
    const float d = __half2float(in[j]) - mean;
    squares += d * d;
  }
  const float scale = rsqrtf(block_sum(squares, partial) / length + eps);

  for (int j = threadIdx.x; j < length; j += blockDim.x) {
    const float y = (__half2float(in[j]) - mean) * scale;
    to[j] = __float2half(y * __half2float(weight[j]) + __half2float(bias[j]));
  }
}
