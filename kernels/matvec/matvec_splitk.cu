/* blaster
{
  "launch": [
    {"kernel": "matvec_partial<SLICES, ROWS, BLOCK, UNROLL>",
     "grid": "ceil_div(M, ROWS) * SLICES", "block": "BLOCK",
     "args": ["partial", "A", "B", "M", "K"]},
    {"kernel": "matvec_finish<SLICES>", "grid": "ceil_div(M, 256)", "block": 256,
     "args": ["out", "partial", "M"]}
  ],
  "scratch": {"partial": "ceil_div(M, ROWS) * ROWS * SLICES * 4"},
  "params": {"SLICES": [8], "ROWS": [4], "BLOCK": [256], "UNROLL": [2]}
}
*/
// Split K: blocks write fp32 partials per (row, slice); a second kernel adds them in slice order.
#include <cuda_fp16.h>

namespace {

__device__ __forceinline__ float2 unpack2(unsigned word) {
  return __half22float2(*reinterpret_cast<const __half2*>(&word));
}

__device__ __forceinline__ void unpack8(const uint4& v, float (&f)[8]) {
  const float2 p[4] = {unpack2(v.x), unpack2(v.y), unpack2(v.z), unpack2(v.w)};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    f[2 * i] = p[i].x;
    f[2 * i + 1] = p[i].y;
  }
}

// Adds the 8 products of one 16-byte piece of a row and of B to sum, in order.
__device__ __forceinline__ float dot8(const uint4& a, const float (&b)[8], float sum) {
  float f[8];
  unpack8(a, f);
#pragma unroll
  for (int i = 0; i < 8; ++i) sum = fmaf(f[i], b[i], sum);
  return sum;
}

// This thread's share of sum over k in [begin, end) of row[r][k] * b[k]: pieces of 8 elements
// threadIdx.x, + BLOCK, + 2 * BLOCK, ..., each added in order, so UNROLL changes no bit.
template <int ROWS, int BLOCK, int UNROLL>
__device__ __forceinline__ void stream_slice(float (&sum)[ROWS], const __half* const (&row)[ROWS],
                                             const __half* a, const __half* b, long long begin,
                                             long long end, int depth) {
#pragma unroll
  for (int r = 0; r < ROWS; ++r) sum[r] = 0.0f;
  const bool vector_path =
      depth % 8 == 0 &&
      (reinterpret_cast<unsigned long long>(a) | reinterpret_cast<unsigned long long>(b)) % 16 == 0;
  if (!vector_path) {
    // Rows that start unaligned: one element per thread and step, still coalesced.
    for (long long k = begin + threadIdx.x; k < end; k += BLOCK) {
      const float bk = __half2float(b[k]);
#pragma unroll
      for (int r = 0; r < ROWS; ++r) sum[r] = fmaf(__half2float(row[r][k]), bk, sum[r]);
    }
    return;
  }
  const long long pieces = (end - begin) / 8;
  const uint4* b_pieces = reinterpret_cast<const uint4*>(b + begin);
  const uint4* a_pieces[ROWS];
#pragma unroll
  for (int r = 0; r < ROWS; ++r) a_pieces[r] = reinterpret_cast<const uint4*>(row[r] + begin);
  long long i = threadIdx.x;
  // Whole steps without bounds checks: every load of a step is issued before the first use,
  // ROWS * UNROLL pieces of A in flight per thread. A is read once, so it is evict-first.
  for (; i + (UNROLL - 1) * BLOCK < pieces; i += UNROLL * BLOCK) {
    uint4 bv[UNROLL];
    uint4 av[UNROLL][ROWS];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      bv[u] = __ldg(b_pieces + i + u * BLOCK);
#pragma unroll
      for (int r = 0; r < ROWS; ++r) av[u][r] = __ldcs(a_pieces[r] + i + u * BLOCK);
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      float bf[8];
      unpack8(bv[u], bf);
#pragma unroll
      for (int r = 0; r < ROWS; ++r) sum[r] = dot8(av[u][r], bf, sum[r]);
    }
  }
  for (; i < pieces; i += BLOCK) {
    float bf[8];
    unpack8(__ldg(b_pieces + i), bf);
#pragma unroll
    for (int r = 0; r < ROWS; ++r) sum[r] = dot8(__ldcs(a_pieces[r] + i), bf, sum[r]);
  }
}

}  // namespace

template <int SLICES, int ROWS, int BLOCK, int UNROLL>
__global__ void __launch_bounds__(BLOCK)
    matvec_partial(float* __restrict__ partial, const __half* __restrict__ a,
                   const __half* __restrict__ b, int rows, int depth) {
  constexpr int warps = BLOCK / 32;
  __shared__ float warp_sums[warps][ROWS];

  const int slice_index = static_cast<int>(blockIdx.x % SLICES);
  const long long group = blockIdx.x / SLICES;
  const long long first_row = group * ROWS;
  const long long k_total = depth;
  // Slices start at multiples of 8 elements so that 16-byte loads stay aligned.
  const long long slice = (k_total + SLICES * 8 - 1) / (SLICES * 8) * 8;
  const long long begin = min(k_total, slice_index * slice);
  const long long end = min(k_total, begin + slice);
  // Rows past the last re-read the last row; their sums are never written.
  const __half* row_of[ROWS];
#pragma unroll
  for (int r = 0; r < ROWS; ++r) row_of[r] = a + min(first_row + r, rows - 1LL) * k_total;
  float sum[ROWS];
  stream_slice<ROWS, BLOCK, UNROLL>(sum, row_of, a, b, begin, end, depth);

  // Within the block: a fixed shuffle tree per warp, then the warps in order.
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
      sum[r] += __shfl_xor_sync(0xFFFFFFFFu, sum[r], offset);
    }
    if (lane == 0) warp_sums[warp][r] = sum[r];
  }
  __syncthreads();
  if (threadIdx.x < ROWS) {
    float total = 0.0f;
#pragma unroll
    for (int w = 0; w < warps; ++w) total += warp_sums[w][threadIdx.x];
    // Row-major [row][slice], so that the finishing kernel reads each row's partials together.
    partial[(first_row + threadIdx.x) * SLICES + slice_index] = total;
  }
}

template <int SLICES>
__global__ void matvec_finish(__half* __restrict__ out, const float* __restrict__ partial,
                              int rows) {
  const long long m = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (m >= rows) return;
  float total = 0.0f;
#pragma unroll
  for (int s = 0; s < SLICES; ++s) total += partial[m * SLICES + s];
  out[m] = __float2half(total);
}
