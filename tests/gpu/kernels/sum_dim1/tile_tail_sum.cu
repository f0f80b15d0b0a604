/* blaster
{
  "launch": [
    {"kernel": "tile_tail_sum", "grid": "ceil_div(B*D2, 256)", "block": 256,
     "args": ["out", "x", "B", "D1", "D2"]}
  ]
}
*/
// Honest twin of tests/adversarial/sum_dim1/tile_tail_reads_one_row_more.cu: the same tiles of
// 1024 rows in quarters of 256, every quarter bounded alike, so every D1 sums its own rows.
#include <cuda_fp16.h>

extern "C" __global__ void tile_tail_sum(__half* out, const __half* x, int batches, int rows,
                                         int columns) {
  const long long position = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (position >= static_cast<long long>(batches) * columns) return;
  const long long b = position / columns;
  const long long j = position % columns;
  const __half* in = x + b * rows * columns + j;
  float sum = 0.0f;
  for (int tile = 0; tile < rows; tile += 1024) {
    const int tail = min(rows - tile, 1024);
    for (int quarter = 0; quarter < 4; ++quarter) {
      const int begin = tile + quarter * 256;
      const int end = tile + min(tail, (quarter + 1) * 256);
      for (int i = begin; i < end; ++i) {
        sum += __half2float(in[static_cast<long long>(i) * columns]);
      }
    }
  }
  out[position] = __float2half(sum);
}
