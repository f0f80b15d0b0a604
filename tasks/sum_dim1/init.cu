/* blaster
{
  "launch": [
    {"kernel": "sum_dim1_naive", "grid": "ceil_div(B*D2, 256)", "block": 256,
     "args": ["out", "x", "B", "D1", "D2"]}
  ]
}
*/
// The first version a newcomer writes: one thread per output (b, j), walking down dim 1 with a
// float accumulator; neighbouring threads read neighbouring columns, so the loads coalesce.
#include <cuda_fp16.h>

extern "C" __global__ void sum_dim1_naive(__half* out, const __half* x, int batches, int rows,
                                          int columns) {
  const long long position = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (position >= static_cast<long long>(batches) * columns) return;
  const long long b = position / columns;
  const long long j = position % columns;
  const __half* in = x + b * rows * columns + j;
  float sum = 0.0f;
  for (int i = 0; i < rows; ++i) sum += __half2float(in[static_cast<long long>(i) * columns]);
  out[position] = __float2half(sum);
}
