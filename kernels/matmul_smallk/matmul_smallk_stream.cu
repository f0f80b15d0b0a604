/* blaster
{
  "launch": [
    {"kernel": "matmul_smallk_stream<COLS, ROWS, STORE>",
     "grid": "ceil_div(N, COLS) * max(1, min(ceil_div(M, ROWS), 132 / ceil_div(N, COLS)))",
     "block": 256,
     "shared_bytes": "432 * ROWS",
     "args": ["out", "A", "B", "M", "N", "K"]}
  ],
  "params": {"COLS": [512, 256], "ROWS": [64, 128], "STORE": [0, 1, 2]}
}
*/
// Write-bound: a persistent grid, one block per SM, each block holding a column strip of B in mma
// fragments while the grid sweeps out band by band; A streams two tiles ahead through a cp.async
// ring so no load stalls the stores, and each 16-byte store instruction writes whole 128-B lines.
#include <cuda_fp16.h>

#include "common/cp_async.cuh"
#include "common/mma_m16n8k16.cuh"
#include "common/shared_memory.cuh"

namespace {

using blaster_common::cp_async_16;
using blaster_common::cp_async_commit;
using blaster_common::cp_async_wait;
using blaster_common::mma_16816;
using blaster_common::pack_float2;
using blaster_common::pack_half2;
using blaster_common::shared_address;

constexpr int max_depth = 64;            // K up to this stays in registers
constexpr int k_steps = max_depth / 16;  // mma k steps
constexpr int a_stride = max_depth + 8;  // halves per staged row of A: 144 B, ldmatrix
                                         // rows of 8 consecutive rows fall on distinct banks
constexpr int stages = 3;                // ring of A tiles: two in flight while one is used
constexpr int threads = 256;             // 8 warps
constexpr int warp_columns = 64;         // columns per warp: 8 mma n tiles, 128 B per row

// Four 8x8 b16 matrices; lane l gives the address of row l % 8 of matrix l / 8.
__device__ __forceinline__ void ldmatrix_x4(unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3,
                                            unsigned address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(address)
               : "memory");
}

__device__ __forceinline__ unsigned word(const uint4& v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

__device__ __forceinline__ uint4 select(bool first, const uint4& x, const uint4& y) {
  return make_uint4(first ? x.x : y.x, first ? x.y : y.y, first ? x.z : y.z, first ? x.w : y.w);
}

__device__ __forceinline__ uint4 shuffle_xor(const uint4& v, int mask) {
  return make_uint4(
      __shfl_xor_sync(0xffffffffu, v.x, mask), __shfl_xor_sync(0xffffffffu, v.y, mask),
      __shfl_xor_sync(0xffffffffu, v.z, mask), __shfl_xor_sync(0xffffffffu, v.w, mask));
}

}  // namespace

// The output is cut into bands of ROWS rows (contiguous in memory) and each band into strips of
// COLS columns. Block j owns strip j % strips and the bands j / strips + i * per_strip, so the
// blocks that run together write neighbouring bands and B's strip is loaded once per block.
// Warp w computes columns 64 * (w % (COLS / 64)) of the strip for the band's 16-row mma tiles
// w / (COLS / 64), + 8 / (COLS / 64), ... STORE: 0 trades 16-byte chunks between neighbouring
// mma row groups so that one store instruction writes 4 rows x 128 B (whole lines), evict-first;
// 1 the same with plain (write-back) stores; 2 stores the mma fragments as they are (8 rows x
// 64 B per instruction), evict-first.
template <int COLS, int ROWS, int STORE>
__global__ void __launch_bounds__(threads, 1)
    matmul_smallk_stream(__half* __restrict__ out, const __half* __restrict__ a,
                         const __half* __restrict__ b, int rows, int columns, int depth) {
  constexpr int warps_across = COLS / warp_columns;
  constexpr int warps_down = threads / 32 / warps_across;
  constexpr int row_tiles = ROWS / 16;
  static_assert(COLS % warp_columns == 0 && (threads / 32) % warps_across == 0, "warp grid");
  static_assert(ROWS % 16 == 0, "whole mma row tiles");
  static_assert(STORE >= 0 && STORE <= 2, "a store mode");
  // stages x ROWS x a_stride halves: the plan's shared_bytes, 432 * ROWS.
  extern __shared__ __align__(128) unsigned char shared_raw[];
  __half* const a_tiles = reinterpret_cast<__half*>(shared_raw);

  const int strips = (columns + COLS - 1) / COLS;
  const int per_strip = static_cast<int>(gridDim.x) / strips;  // the plan: a whole multiple
  const int strip = static_cast<int>(blockIdx.x) % strips;
  const int phase = static_cast<int>(blockIdx.x) / strips;
  const int bands = (rows + ROWS - 1) / ROWS;
  if (phase >= per_strip || phase >= bands) return;  // uniform over the block
  const int my_bands = (bands - phase + per_strip - 1) / per_strip;
  const long long strip_col = static_cast<long long>(strip) * COLS;

  if (depth > max_depth) {
    // Beyond the register budget: one output per thread on the FMA units (no shared memory, no
    // barrier: depth is the same for every thread, so the whole block leaves here).
    for (int i = 0; i < my_bands; ++i) {
      const long long r0 = static_cast<long long>(phase + i * per_strip) * ROWS;
      for (int idx = threadIdx.x; idx < ROWS * COLS; idx += threads) {
        const long long r = r0 + idx / COLS;
        const long long n = strip_col + idx % COLS;
        if (r < rows && n < columns) {
          float sum = 0.0f;
          for (int k = 0; k < depth; ++k) {
            sum = fmaf(__half2float(a[r * depth + k]),
                       __half2float(b[static_cast<long long>(k) * columns + n]), sum);
          }
          out[r * columns + n] = __float2half(sum);
        }
      }
    }
    return;
  }

  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const int group = lane / 4;  // the mma's row (A, C) and column (B) within a tile
  const int quad = lane % 4;   // the mma's k pair (A, B) and column pair (C)
  const int warp_col = warp % warps_across;
  const int warp_row = warp / warps_across;
  const long long col_base = strip_col + warp_columns * warp_col;
  const int steps = (depth + 15) / 16;  // 0 .. k_steps
  const __half zero = __float2half(0.0f);

  // A tile of band `band` into ring slot `slot`: rows band * ROWS + 0 .. ROWS - 1, k 0 ..
  // 16 * steps - 1, zero past M and past K (ldmatrix reads exactly that range).
  const bool vector_a = depth % 8 == 0 && reinterpret_cast<unsigned long long>(a) % 16 == 0;
  const unsigned a_shared = shared_address(a_tiles);
  auto load_tile = [&](int slot, int band) {
    const long long r0 = static_cast<long long>(band) * ROWS;
    if (vector_a) {
      const int chunks = 2 * steps;  // 16-byte pieces per staged row
      for (int idx = threadIdx.x; idx < ROWS * chunks; idx += threads) {
        const int r = idx / chunks;
        const int c = idx % chunks;
        const long long gr = r0 + r;
        const bool valid = gr < rows && 8 * c < depth;
        cp_async_16(a_shared + 2u * static_cast<unsigned>((slot * ROWS + r) * a_stride + 8 * c),
                    valid ? static_cast<const void*>(a + gr * depth + 8 * c) : a, valid ? 16u : 0u);
      }
    } else {
      __half* const dst = a_tiles + slot * ROWS * a_stride;
      const int width = 16 * steps;
      for (int idx = threadIdx.x; idx < ROWS * width; idx += threads) {
        const int r = idx / width;
        const int k = idx % width;
        const long long gr = r0 + r;
        dst[r * a_stride + k] = gr < rows && k < depth ? a[gr * depth + k] : zero;
      }
    }
  };

  // The first tiles are in flight while B's fragments load.
#pragma unroll
  for (int s = 0; s < stages - 1; ++s) {
    if (s < my_bands) load_tile(s, phase + s * per_strip);
    cp_async_commit();
  }

  // B's strip in mma fragments, its columns permuted so that a thread's accumulators of n tiles
  // 0..3 are the 8 adjacent columns 8 * quad + 0..7 of the warp's 64, and those of n tiles 4..7
  // the columns 32 + 8 * quad + 0..7. Logical column `group` of n tile t reads the real column
  // 8 * (group / 2 + 4 * (t / 4)) + 2 * (t % 4) + group % 2; k is in its natural order.
  unsigned fb[8][k_steps][2];
  const bool vector_b = columns % 8 == 0 && reinterpret_cast<unsigned long long>(b) % 16 == 0;
  if (vector_b) {
    // One 16-byte load of a row of B serves 4 n tiles: the 8 columns 8 * (group / 2 + 4 * h).
    const unsigned pick = group % 2 == 0 ? 0x5410u : 0x7632u;  // low or high halves
#pragma unroll
    for (int s = 0; s < k_steps; ++s) {
#pragma unroll
      for (int upper = 0; upper < 2; ++upper) {
        const int k = 16 * s + 2 * quad + 8 * upper;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const long long n = col_base + 8 * (group / 2 + 4 * h);
          uint4 v0 = make_uint4(0, 0, 0, 0);
          uint4 v1 = make_uint4(0, 0, 0, 0);
          if (s < steps && n < columns) {
            if (k < depth)
              v0 = __ldg(
                  reinterpret_cast<const uint4*>(b + k * static_cast<long long>(columns) + n));
            if (k + 1 < depth)
              v1 = __ldg(reinterpret_cast<const uint4*>(
                  b + (k + 1) * static_cast<long long>(columns) + n));
          }
#pragma unroll
          for (int u = 0; u < 4; ++u)
            fb[4 * h + u][s][upper] = __byte_perm(word(v0, u), word(v1, u), pick);
        }
      }
    }
  } else {
    auto b_at = [&](int k, long long n) {
      return k < depth && n < columns ? b[static_cast<long long>(k) * columns + n] : zero;
    };
#pragma unroll
    for (int t = 0; t < 8; ++t) {
      const long long n = col_base + 8 * (group / 2 + 4 * (t / 4)) + 2 * (t % 4) + group % 2;
#pragma unroll
      for (int s = 0; s < k_steps; ++s) {
        const int k = 16 * s + 2 * quad;
        fb[t][s][0] = pack_half2(b_at(k, n), b_at(k + 1, n));
        fb[t][s][1] = pack_half2(b_at(k + 8, n), b_at(k + 9, n));
      }
    }
  }

  const bool vector_out = columns % 8 == 0 && reinterpret_cast<unsigned long long>(out) % 16 == 0;
  // 8 adjacent outputs of row r from column n on (n a multiple of 8).
  auto store = [&](long long r, long long n, const uint4& v) {
    if (r >= rows) return;
    if (vector_out) {
      if (n < columns) {
        uint4* const p = reinterpret_cast<uint4*>(out + r * columns + n);
        if (STORE == 1) {
          *p = v;
        } else {
          __stcs(p, v);  // written once and never read back: evict-first keeps A and B in L2
        }
      }
      return;
    }
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      if (n + j < columns) {
        out[r * columns + n + j] =
            __ushort_as_half(static_cast<unsigned short>(word(v, j / 2) >> (16 * (j % 2))));
      }
    }
  };

  // ldmatrix x4 of a 16 x 16 piece of A: matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7),
  // (rows 0-7, k 8-15), (rows 8-15, k 8-15), the mma's a0 .. a3.
  const unsigned lane_offset = 2u * static_cast<unsigned>((lane % 16) * a_stride + (lane / 16) * 8);
  const bool odd = group % 2 == 1;

  for (int i = 0; i < my_bands; ++i) {
    cp_async_wait<stages - 2>();  // this thread's pieces of tile i have landed
    __syncthreads();              // everyone's have; everyone is done with tile i - 1's slot
    {
      const int next = i + stages - 1;  // into the slot tile i - 1 used
      if (next < my_bands) load_tile(next % stages, phase + next * per_strip);
      cp_async_commit();
    }
    const int slot = i % stages;
    const long long band_row = static_cast<long long>(phase + i * per_strip) * ROWS;

    for (int mt = warp_row; mt < row_tiles; mt += warps_down) {
      const long long r0 = band_row + 16 * mt;
      if (r0 >= rows) break;  // uniform over the warp
      float acc[8][4];
#pragma unroll
      for (int t = 0; t < 8; ++t) acc[t][0] = acc[t][1] = acc[t][2] = acc[t][3] = 0.0f;
      const unsigned tile_address =
          a_shared + 2u * static_cast<unsigned>((slot * ROWS + 16 * mt) * a_stride) + lane_offset;
#pragma unroll
      for (int s = 0; s < k_steps; ++s) {
        if (s < steps) {
          unsigned a0, a1, a2, a3;
          ldmatrix_x4(a0, a1, a2, a3, tile_address + 32u * s);
#pragma unroll
          for (int t = 0; t < 8; ++t) mma_16816(acc[t], a0, a1, a2, a3, fb[t][s][0], fb[t][s][1]);
        }
      }

      // Row group (+ 8) of the tile: columns 8 * quad + 0..7 (n tiles 0..3), 32 + 8 * quad +
      // 0..7 (n tiles 4..7) of the warp's 64.
      const uint4 p0 =
          make_uint4(pack_float2(acc[0][0], acc[0][1]), pack_float2(acc[1][0], acc[1][1]),
                     pack_float2(acc[2][0], acc[2][1]), pack_float2(acc[3][0], acc[3][1]));
      const uint4 p1 =
          make_uint4(pack_float2(acc[4][0], acc[4][1]), pack_float2(acc[5][0], acc[5][1]),
                     pack_float2(acc[6][0], acc[6][1]), pack_float2(acc[7][0], acc[7][1]));
      const uint4 p2 =
          make_uint4(pack_float2(acc[0][2], acc[0][3]), pack_float2(acc[1][2], acc[1][3]),
                     pack_float2(acc[2][2], acc[2][3]), pack_float2(acc[3][2], acc[3][3]));
      const uint4 p3 =
          make_uint4(pack_float2(acc[4][2], acc[4][3]), pack_float2(acc[5][2], acc[5][3]),
                     pack_float2(acc[6][2], acc[6][3]), pack_float2(acc[7][2], acc[7][3]));
      if (STORE != 2) {
        // Row groups 2h and 2h + 1 swap one chunk per row: the even lane then holds chunk quad
        // of rows 2h and 2h + 1, the odd lane chunk 4 + quad of both, so 8 lanes cover each
        // row's 128 bytes in one instruction.
        const uint4 y0 = shuffle_xor(select(odd, p0, p1), 4);
        const uint4 y1 = shuffle_xor(select(odd, p2, p3), 4);
        const long long r = r0 + (group - (odd ? 1 : 0));
        const long long n = col_base + 8 * (quad + (odd ? 4 : 0));
        store(r, n, select(odd, y0, p0));
        store(r + 1, n, select(odd, p1, y0));
        store(r + 8, n, select(odd, y1, p2));
        store(r + 9, n, select(odd, p3, y1));
      } else {
        const long long r = r0 + group;
        const long long n = col_base + 8 * quad;
        store(r, n, p0);
        store(r, n + 32, p1);
        store(r + 8, n, p2);
        store(r + 8, n + 32, p3);
      }
    }
  }
  cp_async_wait<0>();  // nothing left in flight into shared memory at exit
}
