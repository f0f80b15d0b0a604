/* blaster
{
  "launch": [
    {"kernel": "sum_dim1_partial<ROWS>", "grid": ["ceil_div(D2, 256)", "ceil_div(D1, ROWS)", "B"],
     "block": 256, "args": ["partial", "x", "D1", "D2"]},
    {"kernel": "sum_dim1_finish<ROWS>", "grid": ["ceil_div(D2, 256)", "B"], "block": 256,
     "args": ["out", "partial", "D1", "D2"]}
  ],
  "scratch": {"partial": "B * ceil_div(D1, ROWS) * D2 * 4"},
  "params": {"ROWS": [64]}
}
*/
// Style: a split reduction with a second pass. Dim 1 is cut into splits of ROWS rows: the first
// kernel has a thread per (b, split, column) add its split's rows and write the float partial to
// the declared scratch, every entry in every launch before the second kernel reads it (the
// scratch starts as poison, and nothing is kept from an earlier launch); the second adds a
// column's partials in split order, a fixed order, so the result is the same on every run with
// no atomics. Any D1 and D2, one element per load; splits are the grid's y (256 at most) and B
// its z (1024 at most).
#include <cuda_fp16.h>

template <int ROWS>
__global__ void __launch_bounds__(256)
    sum_dim1_partial(float* __restrict__ partial, const __half* __restrict__ x, int rows,
                     int columns) {
  const int j = blockIdx.x * 256 + threadIdx.x;
  if (j >= columns) return;
  const int splits = (rows + ROWS - 1) / ROWS;
  const long long b = blockIdx.z;
  const int begin = blockIdx.y * ROWS;
  const int end = min(rows, begin + ROWS);
  const __half* in = x + (b * rows + begin) * columns + j;
  float sum = 0.0f;
  for (int i = 0; i < end - begin; ++i) sum += __half2float(in[static_cast<long long>(i) * columns]);
  partial[(b * splits + blockIdx.y) * columns + j] = sum;
}

template <int ROWS>
__global__ void __launch_bounds__(256)
    sum_dim1_finish(__half* __restrict__ out, const float* __restrict__ partial, int rows,
                    int columns) {
  const int j = blockIdx.x * 256 + threadIdx.x;
  if (j >= columns) return;
  const int splits = (rows + ROWS - 1) / ROWS;
  const long long b = blockIdx.y;
  const float* in = partial + b * splits * columns + j;
  float sum = 0.0f;
  for (int s = 0; s < splits; ++s) sum += in[static_cast<long long>(s) * columns];
  out[b * columns + j] = __float2half(sum);
}
