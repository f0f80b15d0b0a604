/* blaster
{
  "launch": [
    {"kernel": "matvec_naive", "grid": "ceil_div(M, 256)", "block": 256,
     "args": ["out", "A", "B", "M", "K"]}
  ]
}
*/
// The first version a newcomer writes: one thread per output row, walking the row with a float
// accumulator. Neighbouring threads read rows K elements apart, so no load coalesces, and with
// few rows most of the GPU idles.
#include <cuda_fp16.h>

extern "C" __global__ void matvec_naive(__half* out, const __half* a, const __half* b, int rows,
                                        int depth) {
  const long long m = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (m >= rows) return;
  const __half* row = a + m * depth;
  float sum = 0.0f;
  for (int k = 0; k < depth; ++k) sum += __half2float(row[k]) * __half2float(b[k]);
  out[m] = __float2half(sum);
}
