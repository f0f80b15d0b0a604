/* blaster
{
  "launch": [
    {"kernel": "cross_entropy_rows", "grid": "ceil_div(N, 256)", "block": 256,
     "args": ["row_loss", "logits", "targets", "N", "C"]},
    {"kernel": "cross_entropy_mean", "grid": 1, "block": 256, "args": ["loss", "row_loss", "N"]}
  ],
  "scratch": {"row_loss": "N*4"}
}
*/
// The first version a newcomer writes: one thread per row computes that row's loss into scratch,
// then one block adds the rows up in a fixed order (an atomicAdd would make the sum's rounding
// depend on timing).
#include <cuda_fp16.h>

extern "C" __global__ void cross_entropy_rows(float* row_loss, const __half* logits,
                                              const long long* targets, int rows, int classes) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  const __half* row = logits + static_cast<long long>(i) * classes;
  float m = __half2float(row[0]);
  for (int j = 1; j < classes; ++j) m = fmaxf(m, __half2float(row[j]));
  float sum = 0.0f;
  for (int j = 0; j < classes; ++j) sum += expf(__half2float(row[j]) - m);
  row_loss[i] = m + logf(sum) - __half2float(row[targets[i]]);
}

extern "C" __global__ void cross_entropy_mean(float* loss, const float* row_loss, int rows) {
  __shared__ float partial[256];
  float sum = 0.0f;
  for (int i = threadIdx.x; i < rows; i += blockDim.x) sum += row_loss[i];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) loss[0] = partial[0] / rows;
}
