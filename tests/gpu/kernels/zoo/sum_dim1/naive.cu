/* blaster
{
  "launch": [
    {"kernel": "sum_dim1_column", "grid": ["ceil_div(D2, 128)", "B"], "block": 128,
     "args": ["out", "x", "D1", "D2"]}
  ]
}
*/
// Style: naive. One thread per output (b, j): it walks down dim 1 adding one half at a time in a
// float, in row order. Neighbouring threads read neighbouring columns, so each row's loads
// coalesce. Any D1 and D2, no alignment assumed; B is the grid's y (1024 at most).
#include <cuda_fp16.h>

extern "C" __global__ void sum_dim1_column(__half* out, const __half* x, int rows, int columns) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= columns) return;
  const long long b = blockIdx.y;
  const __half* in = x + b * rows * columns + j;
  float sum = 0.0f;
  for (int i = 0; i < rows; ++i) sum += __half2float(in[static_cast<long long>(i) * columns]);
  out[b * columns + j] = __float2half(sum);
}
