/* blaster
{
  "launch": [
    {"kernel": "gemv_mma<R, WARPS, LOADS>", "grid": ["ceil_div(N, 16 * R)", "ceil_div(M, 16)"],
     "block": "WARPS * 32", "args": ["y", "x", "w", "M", "N", "K"]}
  ],
  "params": {"R": [1, 2, 4], "WARPS": [4, 8], "LOADS": [8, 16]}
}
*/
// Bandwidth-bound: each weight row is read once, in 16-byte evict-first loads, LOADS of them in
// flight per thread, and every element loaded is used for all 16 tokens of a block at once on
// the tensor cores (mma m16n8k16, bf16 in, fp32 sums), so the math never limits, from 1 token to
// 16. A block owns 16 * R rows; its warps split K and add their sums in a fixed order.
#include <cuda_bf16.h>

#include "common/bf16_pack.cuh"
#include "common/mma_m16n8k16.cuh"
#include "common/warp_reduce.cuh"

using blaster_common::aligned16;
using blaster_common::mma_16816_bf16;
using blaster_common::warp_sum;

namespace {

// The weight is read once: skip L1, and ask L2 for whole 256-byte lines, which the block's
// neighbouring warps read at about the same time.
__device__ __forceinline__ uint4 load_once(const uint4* p) {
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p));
  return v;
}

// One 16 x 32 slice of a tile against the x pack of each token group. The k order inside the
// mma is permuted, the same way for the weight and x: lane (group g, quad c) brings elements
// c*8 .. c*8+7 of rows g and g+8 and of token g, the first four in one mma, the last four in
// the next, so every operand comes from one 16-byte load.
template <int G>
__device__ __forceinline__ void mma_pack(float (&acc)[G][4], const uint4& lo, const uint4& hi,
                                         const uint4 (&b)[G]) {
#pragma unroll
  for (int g = 0; g < G; ++g) {
    mma_16816_bf16(acc[g], lo.x, hi.x, lo.y, hi.y, b[g].x, b[g].y);
    mma_16816_bf16(acc[g], lo.z, hi.z, lo.w, hi.w, b[g].z, b[g].w);
  }
}

// This warp's share of the block's R tiles of 16 rows against G groups of 8 tokens, left in
// partial[warp][token][row]. Super-chunks of U * 32 elements of k go to the warps in turn; a
// last partial one goes, guarded, to the next warp.
template <int R, int WARPS, int U, int G>
__device__ __forceinline__ void warp_tiles(float (*partial)[16 * R], const __nv_bfloat16* x,
                                           const __nv_bfloat16* w, int tokens, int outputs,
                                           int depth, long long row0, int token0) {
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int group = lane / 4;
  const int quad = lane % 4;
  const int packs = depth / 8;  // 16-byte packs per row

  const uint4* a_row[R][2];
#pragma unroll
  for (int t = 0; t < R; ++t) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      // Rows past the last re-read the last row; their sums are never stored.
      const long long row = min(row0 + t * 16 + h * 8 + group, outputs - 1LL);
      a_row[t][h] = reinterpret_cast<const uint4*>(w + row * depth) + quad;
    }
  }
  const uint4* b_row[G];
  bool b_live[G];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    const int token = token0 + g * 8 + group;
    b_live[g] = token < tokens;
    b_row[g] = reinterpret_cast<const uint4*>(x + static_cast<long long>(min(token, tokens - 1)) *
                                                      depth) +
               quad;
  }

  float acc[R][G][4];
#pragma unroll
  for (int t = 0; t < R; ++t)
#pragma unroll
    for (int g = 0; g < G; ++g)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[t][g][i] = 0.0f;

  const uint4 zero = make_uint4(0u, 0u, 0u, 0u);
  const int whole = packs / (4 * U);  // super-chunks with no pack past the row's end
  for (int sc = warp; sc < whole; sc += WARPS) {
    const int base = sc * 4 * U;
    uint4 a[U][R][2];
    uint4 b[U][G];
    // Every load of the step is issued before the first mma.
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int t = 0; t < R; ++t)
#pragma unroll
        for (int h = 0; h < 2; ++h) a[u][t][h] = load_once(a_row[t][h] + base + 4 * u);
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int g = 0; g < G; ++g) b[u][g] = b_live[g] ? __ldg(b_row[g] + base + 4 * u) : zero;
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int t = 0; t < R; ++t) mma_pack<G>(acc[t], a[u][t][0], a[u][t][1], b[u]);
  }
  if (whole * 4 * U < packs && warp == whole % WARPS) {
    // The row's last packs: 32 elements a step, lanes past the end add zeros.
    for (int base = whole * 4 * U; base < packs; base += 4) {
      const bool in = base + quad < packs;
      uint4 b[G];
#pragma unroll
      for (int g = 0; g < G; ++g) b[g] = in && b_live[g] ? __ldg(b_row[g] + base) : zero;
#pragma unroll
      for (int t = 0; t < R; ++t) {
        const uint4 lo = in ? load_once(a_row[t][0] + base) : zero;
        const uint4 hi = in ? load_once(a_row[t][1] + base) : zero;
        mma_pack<G>(acc[t], lo, hi, b);
      }
    }
  }

  // Accumulator i of tile t, group g: row t*16 + group + 8*(i/2), token g*8 + 2*quad + i%2.
#pragma unroll
  for (int t = 0; t < R; ++t)
#pragma unroll
    for (int g = 0; g < G; ++g)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        partial[g * 8 + 2 * quad + (i & 1)][t * 16 + group + 8 * (i >> 1)] = acc[t][g][i];
      }
}

}  // namespace

// Block (bx, by): rows 16*R*bx .. +16*R, tokens 16*by .. +16. LOADS: 16-byte weight loads in
// flight per thread per step (2 rows of each of R tiles, U = LOADS / (2R) chunks deep).
template <int R, int WARPS, int LOADS>
__global__ void __launch_bounds__(WARPS * 32)
    gemv_mma(__nv_bfloat16* __restrict__ y, const __nv_bfloat16* __restrict__ x,
             const __nv_bfloat16* __restrict__ w, int tokens, int outputs, int depth) {
  constexpr int ROWS = 16 * R;
  constexpr int U = LOADS / (2 * R);
  static_assert(U >= 1 && U * 2 * R == LOADS, "LOADS is a multiple of 2 * R");
  __shared__ float partial[WARPS][16][ROWS];

  const long long row0 = static_cast<long long>(blockIdx.x) * ROWS;
  const int token0 = blockIdx.y * 16;
  const int here = min(16, tokens - token0);  // tokens of this block
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;

  if (depth % 8 == 0 && aligned16(x, w)) {
    if (here <= 8) {
      warp_tiles<R, WARPS, U, 1>(partial[warp], x, w, tokens, outputs, depth, row0, token0);
    } else {
      warp_tiles<R, WARPS, U, 2>(partial[warp], x, w, tokens, outputs, depth, row0, token0);
    }
    __syncthreads();
    // The warps' sums in warp order; consecutive threads store consecutive rows.
    for (int e = threadIdx.x; e < here * ROWS; e += WARPS * 32) {
      const int token = e / ROWS;
      const int r = e % ROWS;
      float sum = 0.0f;
#pragma unroll
      for (int v = 0; v < WARPS; ++v) sum += partial[v][token][r];
      if (row0 + r < outputs) {
        y[static_cast<long long>(token0 + token) * outputs + row0 + r] = __float2bfloat16_rn(sum);
      }
    }
    return;
  }

  // Rows that are not whole 16-byte packs: a warp per (token, row), one element per lane and
  // step, then a fixed shuffle tree.
  for (int e = warp; e < here * ROWS; e += WARPS) {
    const int token = e / ROWS;
    const long long row = row0 + e % ROWS;
    if (row >= outputs) continue;
    const __nv_bfloat16* xr = x + static_cast<long long>(token0 + token) * depth;
    const __nv_bfloat16* wr = w + row * depth;
    float sum = 0.0f;
    for (int k = lane; k < depth; k += 32) {
      sum = fmaf(__bfloat162float(xr[k]), __bfloat162float(wr[k]), sum);
    }
    sum = warp_sum(sum);
    if (lane == 0) {
      y[static_cast<long long>(token0 + token) * outputs + row] = __float2bfloat16_rn(sum);
    }
  }
}
