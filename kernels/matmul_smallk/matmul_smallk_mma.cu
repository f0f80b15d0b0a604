/* blaster
{
  "launch": [
    {"kernel": "matmul_smallk_mma<MT, ROWS>",
     "grid": ["ceil_div(N, 256)", "ceil_div(M, ROWS)"], "block": 256,
     "args": ["out", "A", "B", "M", "N", "K"]}
  ],
  "params": {"MT": [1], "ROWS": [256]}
}
*/
// Write-bound: B stays in mma fragments, A streams through mma.sync, 16-byte evict-first stores.
#include <cuda_fp16.h>

#include "common/mma_m16n8k16.cuh"

namespace {

using blaster_common::mma_16816;
using blaster_common::pack_float2;
using blaster_common::pack_half2;

constexpr int max_depth = 64;             // K up to this stays in registers
constexpr int k_blocks = max_depth / 32;  // 16-byte loads of A per row: 32 k each per quad
constexpr int k_steps = max_depth / 16;   // mma k steps
constexpr int block_columns = 256;        // 8 warps of 32 columns

}  // namespace

// Warp w of a block owns 32 columns, block_columns * blockIdx.x + 32 * w on; MT: 16-row mma
// tiles per step; ROWS: rows per block (a multiple of 16 * MT).
template <int MT, int ROWS>
__global__ void __launch_bounds__(256)
    matmul_smallk_mma(__half* __restrict__ out, const __half* __restrict__ a,
                      const __half* __restrict__ b, int rows, int columns, int depth) {
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const int group = lane / 4;  // the mma's row (A, C) and column (B) within a tile
  const int quad = lane % 4;   // the mma's k pair (A, B) and column pair (C)
  const long long block_col = static_cast<long long>(blockIdx.x) * block_columns;
  const long long row_begin = static_cast<long long>(blockIdx.y) * ROWS;
  const long long row_end = min(static_cast<long long>(rows), row_begin + ROWS);
  static_assert(ROWS % (16 * MT) == 0, "a step never crosses into the next block's rows");

  if (depth > max_depth) {
    // Beyond the register budget: one output per thread on the FMA units.
    for (long long r = row_begin + warp; r < row_end; r += 8) {
      for (long long n = block_col + lane;
           n < min(static_cast<long long>(columns), block_col + block_columns); n += 32) {
        float sum = 0.0f;
        for (int k = 0; k < depth; ++k) {
          sum = fmaf(__half2float(a[r * depth + k]),
                     __half2float(b[static_cast<long long>(k) * columns + n]), sum);
        }
        out[r * columns + n] = __float2half(sum);
      }
    }
    return;
  }

  // The mma's k and n orders are permuted, the same way for A and B, so that one 16-byte load
  // of A feeds two k steps and a thread's accumulators land on 8 adjacent output columns.
  // Logical k 2*quad + {0, 1} and 2*quad + 8 + {0, 1} of step s read the real k
  // 32*(s/2) + 8*quad + 4*(s%2) + {0, 1} and + {2, 3}: one quad's 16 bytes of a row of A.
  // Logical column `group` of n tile t (of 4) reads the real column 8*(group/2) + 2*t +
  // group%2, so that accumulator pair t of a thread is real column 8*quad + 2*t + {0, 1}.
  const __half zero = __float2half(0.0f);
  auto b_at = [&](int k, long long n) {
    return k < depth && n < columns ? b[static_cast<long long>(k) * columns + n] : zero;
  };
  unsigned fb[4][k_steps][2];
#pragma unroll
  for (int t = 0; t < 4; ++t) {
    const long long n = block_col + warp * 32 + 8 * (group / 2) + 2 * t + group % 2;
#pragma unroll
    for (int s = 0; s < k_steps; ++s) {
      const int k = 32 * (s / 2) + 8 * quad + 4 * (s % 2);
      fb[t][s][0] = pack_half2(b_at(k, n), b_at(k + 1, n));
      fb[t][s][1] = pack_half2(b_at(k + 2, n), b_at(k + 3, n));
    }
  }

  const bool vector_a = depth % 8 == 0 && reinterpret_cast<unsigned long long>(a) % 16 == 0;
  const bool vector_out = columns % 8 == 0 && reinterpret_cast<unsigned long long>(out) % 16 == 0;
  const int steps = (depth + 15) / 16;

  // Row `group` (+ 8) of each mma tile, 32 k per 16-byte piece.
  auto load_a = [&](uint4(&piece)[MT][2][k_blocks], long long r0) {
#pragma unroll
    for (int m = 0; m < MT; ++m) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const long long r = r0 + 16 * m + group + 8 * half;
#pragma unroll
        for (int kb = 0; kb < k_blocks; ++kb) {
          const int k = 32 * kb + 8 * quad;
          uint4 v = make_uint4(0, 0, 0, 0);
          if (32 * kb < depth) {
            if (vector_a) {
              if (r < rows && k < depth)
                v = __ldg(reinterpret_cast<const uint4*>(a + r * depth + k));
            } else if (r < rows) {
              __half e[8];
#pragma unroll
              for (int j = 0; j < 8; ++j) e[j] = k + j < depth ? a[r * depth + k + j] : zero;
              v = make_uint4(pack_half2(e[0], e[1]), pack_half2(e[2], e[3]), pack_half2(e[4], e[5]),
                             pack_half2(e[6], e[7]));
            }
          }
          piece[m][half][kb] = v;
        }
      }
    }
  };

  auto store = [&](long long r, long long n, const uint4& v) {
    if (r >= rows) return;
    if (vector_out) {
      // Written once and never read back: evict-first keeps A and B in L2.
      if (n < columns) __stcs(reinterpret_cast<uint4*>(out + r * columns + n), v);
      return;
    }
    const unsigned words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      if (n + j < columns) {
        out[r * columns + n + j] =
            __ushort_as_half(static_cast<unsigned short>(words[j / 2] >> (16 * (j % 2))));
      }
    }
  };

  uint4 current[MT][2][k_blocks];
  load_a(current, row_begin);
  for (long long r0 = row_begin; r0 < row_end; r0 += 16 * MT) {
    // The next step's rows are in flight while this step multiplies and stores.
    uint4 next[MT][2][k_blocks] = {};
    if (r0 + 16 * MT < row_end) load_a(next, r0 + 16 * MT);

#pragma unroll
    for (int m = 0; m < MT; ++m) {
      float acc[4][4];
#pragma unroll
      for (int t = 0; t < 4; ++t) {
        acc[t][0] = acc[t][1] = acc[t][2] = acc[t][3] = 0.0f;
#pragma unroll
        for (int s = 0; s < k_steps; ++s) {
          if (s < steps) {
            const uint4& lo = current[m][0][s / 2];
            const uint4& hi = current[m][1][s / 2];
            const bool upper = s % 2 == 1;
            mma_16816(acc[t], upper ? lo.z : lo.x, upper ? hi.z : hi.x, upper ? lo.w : lo.y,
                      upper ? hi.w : hi.y, fb[t][s][0], fb[t][s][1]);
          }
        }
      }
      const long long r = r0 + 16 * m + group;
      const long long n = block_col + warp * 32 + 8 * quad;
      store(r, n,
            make_uint4(pack_float2(acc[0][0], acc[0][1]), pack_float2(acc[1][0], acc[1][1]),
                       pack_float2(acc[2][0], acc[2][1]), pack_float2(acc[3][0], acc[3][1])));
      store(r + 8, n,
            make_uint4(pack_float2(acc[0][2], acc[0][3]), pack_float2(acc[1][2], acc[1][3]),
                       pack_float2(acc[2][2], acc[2][3]), pack_float2(acc[3][2], acc[3][3])));
    }

#pragma unroll
    for (int m = 0; m < MT; ++m) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
#pragma unroll
        for (int kb = 0; kb < k_blocks; ++kb) current[m][half][kb] = next[m][half][kb];
      }
    }
  }
}
