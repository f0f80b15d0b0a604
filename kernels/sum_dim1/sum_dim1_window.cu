/* blaster
{
  "launch": [
    {"kernel": "sum_dim1_window<BLOCK, TX, U>",
     "grid": ["ceil_div(D2, 8*TX - 8*min(D2 % 8, 1))", "B"], "block": "BLOCK",
     "args": ["out", "x", "B", "D1", "D2"]}
  ],
  "params": {"TX": [2, 32], "BLOCK": [256, 512], "U": [2, 4, 8]}
}
*/
// A block sums a tile of columns of one batch over all D1 rows: TX lanes read a row's tile as
// aligned 16-byte packs, BLOCK/TX row lanes split D1, and shared memory adds the row lanes'
// partials in a fixed order. When D2 % 8 != 0 rows start anywhere in a pack: the lanes read the
// aligned packs around the row's 8*(TX-1) columns and each keeps the elements of its tile. Row
// lanes step by a multiple of 8 rows, so a lane's offset inside its pack never changes.
#include <cuda_fp16.h>

__device__ __forceinline__ void add8(float (&sum)[8], const uint4& v) {
  const unsigned words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&words[k]));
    sum[2 * k] += f.x;
    sum[2 * k + 1] += f.y;
  }
}

template <int BLOCK, int TX, int U>
__global__ void __launch_bounds__(BLOCK)
    sum_dim1_window(__half* __restrict__ out, const __half* __restrict__ x, int batches,
                    int rows, int columns) {
  constexpr int TY = BLOCK / TX;  // row lanes
  constexpr int PITCH = 8 * TX + 1;
  static_assert(TX >= 2 && TY % 8 == 0, "row lanes must step by a multiple of 8 rows");
  __shared__ float partial[TY * PITCH];

  const int tx = threadIdx.x % TX;
  const int ty = threadIdx.x / TX;
  const int b = blockIdx.y;
  const int width = columns % 8 == 0 ? 8 * TX : 8 * (TX - 1);  // the grid's tile width
  const int first_column = blockIdx.x * width;
  const int valid = min(width, columns - first_column);

  // Element (b, ty, first_column) and where it sits in its pack; the shift holds for all of
  // this lane's rows because ty + k*TY moves by k*TY*columns elements, a multiple of 8.
  const long long total = static_cast<long long>(batches) * rows * columns;
  const long long start = (static_cast<long long>(b) * rows + ty) * columns + first_column;
  const int shift = static_cast<int>(start % 8);
  const int lead = 8 * tx - shift;  // tile column of this lane's first element
  const long long step = static_cast<long long>(TY) * columns / 8;  // packs per TY rows

  // Rows below `vector_rows` are read as whole packs. Only the buffer's last pack can hang
  // past its end; when this lane's last row lands on it, that row is read element by element.
  int vector_rows = lead < valid ? rows : 0;
  long long last_pack = -1;
  if (vector_rows > 0 && ty < rows && total % 8 != 0) {
    const int last_row = ty + (rows - 1 - ty) / TY * TY;
    const long long pack = start / 8 + tx + static_cast<long long>((last_row - ty) / TY) * step;
    if (pack == (total - 1) / 8) {
      vector_rows = last_row;
      last_pack = pack;
    }
  }

  float sum[8];
#pragma unroll
  for (int k = 0; k < 8; ++k) sum[k] = 0.0f;

  // Whole groups of U rows first: no test per load, so the U loads can issue back to back.
  const uint4* p = reinterpret_cast<const uint4*>(x) + start / 8 + tx;
  int i = ty;
  for (; i + (U - 1) * TY < vector_rows; i += U * TY) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = __ldg(p + u * step);
#pragma unroll
    for (int u = 0; u < U; ++u) add8(sum, v[u]);
    p += U * step;
  }
  if (i < vector_rows) {  // fewer than U rows left
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      v[u] = i + u * TY < vector_rows ? __ldg(p + u * step) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (i + u * TY < vector_rows) add8(sum, v[u]);
    }
  }
  if (last_pack >= 0) {
    for (int k = 0; k < 8; ++k) {
      const long long e = last_pack * 8 + k;
      if (e < total) sum[k] += __half2float(x[e]);
    }
  }

  // Every tile column gets exactly one value per row lane; elements outside the tile drop out.
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const int c = lead + k;
    if (c >= 0 && c < width) partial[ty * PITCH + c] = sum[k];
  }
  __syncthreads();

  // S threads per column (a power of two, at most a warp) add every S-th row lane, then a
  // shuffle tree joins them: a fixed order, so the result is the same on every run.
  int log_s = 0;
  while (log_s < 5 && (width << (log_s + 1)) <= BLOCK) ++log_s;
  const int s = threadIdx.x & ((1 << log_s) - 1);
  const int c = threadIdx.x >> log_s;
  float total_sum = 0.0f;
  if (c < valid) {
    for (int r = s; r < TY; r += 1 << log_s) total_sum += partial[r * PITCH + c];
  }
  for (int o = (1 << log_s) / 2; o > 0; o /= 2) {
    total_sum += __shfl_xor_sync(0xffffffffu, total_sum, o);
  }
  if (s == 0 && c < valid) {
    out[static_cast<long long>(b) * columns + first_column + c] = __float2half(total_sum);
  }
}
