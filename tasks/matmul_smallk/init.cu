/* blaster
{
  "launch": [
    {"kernel": "matmul_smallk_naive", "grid": "ceil_div(M*N, 256)", "block": 256,
     "args": ["out", "A", "B", "M", "N", "K"]}
  ]
}
*/
// The first version a newcomer writes: one thread per output element, a float accumulator over
// the K products. Neighbouring threads share a row of A and read neighbouring columns of B, so
// the loads coalesce; the multiply-adds run on the plain FMA units.
#include <cuda_fp16.h>

extern "C" __global__ void matmul_smallk_naive(__half* out, const __half* a, const __half* b,
                                               int rows, int columns, int depth) {
  const long long position = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (position >= static_cast<long long>(rows) * columns) return;
  const long long m = position / columns;
  const long long n = position % columns;
  float sum = 0.0f;
  for (int k = 0; k < depth; ++k) {
    sum +=
        __half2float(a[m * depth + k]) * __half2float(b[static_cast<long long>(k) * columns + n]);
  }
  out[position] = __float2half(sum);
}
