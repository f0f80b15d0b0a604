/* blaster
{
  "launch": [
    {"kernel": "tile_tail_sum", "grid": "ceil_div(B*D2, 256)", "block": 256,
     "args": ["out", "x", "B", "D1", "D2"]}
  ]
}
*/
// Broken, as kernels ported from collections of generated code are: the reduction walks dim 1 in
// tiles of 1024 rows, four quarters of 256 each, and the last quarter of a partial last tile is
// bounded with <= where the others use <. So when D1 mod 1024 falls in 768..1023 it adds one row
// past the end: the next batch's first row, or past the last batch the bytes after x (a crash
// where that row reaches the guard pages). No fixed case of sum_dim1 has such a D1; the shapes
// the gate draws from the task's ranges do.
// expect: wrong_result|crash
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
      const int last = quarter == 3 && tail < 1024 ? end : end - 1;
      for (int i = begin; i <= last; ++i) {
        sum += __half2float(in[static_cast<long long>(i) * columns]);
      }
    }
  }
  out[position] = __float2half(sum);
}
