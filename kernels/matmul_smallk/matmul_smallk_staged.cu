/* blaster
{
  "launch": [
    {"kernel": "matmul_smallk_staged<MT, BULK>",
     "grid": ["ceil_div(N, 256)", "ceil_div(M, 256)"], "block": 256,
     "args": ["out", "A", "B", "M", "N", "K"]}
  ],
  "params": {"MT": [1, 2], "BULK": [1, 0]}
}
*/
// Write-bound: mma.sync tiles staged in double-buffered shared memory, then stored as whole 512-B
// rows (one cp.async.bulk per row, or 16-byte evict-first stores of a full row per warp).
#include <cuda_fp16.h>

#include "common/mma_m16n8k16.cuh"
#include "common/shared_memory.cuh"

namespace {

using blaster_common::mma_16816;
using blaster_common::pack_float2;
using blaster_common::pack_half2;
using blaster_common::shared_address;

constexpr int max_depth = 64;             // K up to this stays in registers
constexpr int k_blocks = max_depth / 32;  // 16-byte loads of A per row: 32 k each per quad
constexpr int k_steps = max_depth / 16;   // mma k steps
constexpr int block_columns = 256;        // 8 warps of 32 columns
constexpr int block_rows = 256;           // rows per block (the plan's grid.y divides M by it)
// Halves per staged row: 512 B of data and 64 B of padding, so that the 8 rows an mma store
// writes at once (rows g and g+1 of a quarter warp) fall on different banks; 576 B keeps every
// row 16-byte aligned for vector reads and bulk copies.
constexpr int tile_stride = block_columns + 32;

// Generic-proxy writes to shared memory made visible to the async proxy (the bulk copy engine).
__device__ __forceinline__ void fence_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

__device__ __forceinline__ unsigned long long evict_first_policy() {
  unsigned long long policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

// bytes: a multiple of 16; dst and src 16-byte aligned.
__device__ __forceinline__ void bulk_store(void* dst, const void* src, unsigned bytes,
                                           unsigned long long policy) {
  asm volatile(
      "cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%0], [%1], %2, %3;" ::"l"(dst),
      "r"(shared_address(src)), "r"(bytes), "l"(policy)
      : "memory");
}

__device__ __forceinline__ void bulk_commit() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

// Every bulk copy this thread issued has finished reading its shared memory source.
__device__ __forceinline__ void bulk_wait_read_all() {
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}

// Every bulk copy this thread issued is complete.
__device__ __forceinline__ void bulk_wait_all() {
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

}  // namespace

// Warp w of a block computes 32 columns, block_columns * blockIdx.x + 32 * w on, of 16 * MT rows
// per step into a shared tile; the block then stores the tile row by row. BULK: 1 stores each row
// with one cp.async.bulk (threads 0 .. 16 * MT - 1 issue one row each), 0 with 16-byte st.global.cs
// (a warp writes a whole row per instruction). Rows or columns the fast paths cannot take (N % 8,
// a misaligned out) are stored element by element from the same tile.
template <int MT, int BULK>
__global__ void __launch_bounds__(256)
    matmul_smallk_staged(__half* __restrict__ out, const __half* __restrict__ a,
                         const __half* __restrict__ b, int rows, int columns, int depth) {
  constexpr int step_rows = 16 * MT;
  static_assert(block_rows % step_rows == 0, "a step never crosses into the next block's rows");
  static_assert(step_rows <= 32, "bulk copies are issued by one warp, one row per lane");
  __shared__ __align__(128) __half tile[2][step_rows][tile_stride];

  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const int group = lane / 4;  // the mma's row (A, C) and column (B) within a tile
  const int quad = lane % 4;   // the mma's k pair (A, B) and column pair (C)
  const long long block_col = static_cast<long long>(blockIdx.x) * block_columns;
  const long long row_begin = static_cast<long long>(blockIdx.y) * block_rows;
  const long long row_end = min(static_cast<long long>(rows), row_begin + block_rows);

  if (depth > max_depth) {
    // Beyond the register budget: one output per thread on the FMA units (no shared memory, no
    // barrier: depth is the same for every thread, so the whole block leaves here).
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
  // Every row segment out + r * columns + block_col is then 16-byte aligned and its length,
  // 2 * block_width bytes, a multiple of 16.
  const bool vector_out = columns % 8 == 0 && reinterpret_cast<unsigned long long>(out) % 16 == 0;
  const bool bulk = BULK != 0 && vector_out;
  const int steps = (depth + 15) / 16;
  // Columns of this block inside out: 1 .. block_columns (block_col < columns by the grid).
  const int block_width =
      static_cast<int>(min(static_cast<long long>(block_columns), columns - block_col));
  const bool issuer = bulk && threadIdx.x < step_rows;

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

  uint4 current[MT][2][k_blocks];
  load_a(current, row_begin);
  int parity = 0;
  for (long long r0 = row_begin; r0 < row_end; r0 += step_rows) {
    // The next step's rows are in flight while this step multiplies and stores.
    uint4 next[MT][2][k_blocks] = {};
    if (r0 + step_rows < row_end) load_a(next, r0 + step_rows);

    // Buffer `parity` was last read two steps ago: by this block's generic loads, all done before
    // the previous step's barrier, or by bulk copies whose reads the issuers waited for before
    // that same barrier.
    __half(*buf)[tile_stride] = tile[parity];

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
      const int c = warp * 32 + 8 * quad;
      *reinterpret_cast<uint4*>(&buf[16 * m + group][c]) =
          make_uint4(pack_float2(acc[0][0], acc[0][1]), pack_float2(acc[1][0], acc[1][1]),
                     pack_float2(acc[2][0], acc[2][1]), pack_float2(acc[3][0], acc[3][1]));
      *reinterpret_cast<uint4*>(&buf[16 * m + group + 8][c]) =
          make_uint4(pack_float2(acc[0][2], acc[0][3]), pack_float2(acc[1][2], acc[1][3]),
                     pack_float2(acc[2][2], acc[2][3]), pack_float2(acc[3][2], acc[3][3]));
    }

    if (bulk) {
      fence_async_shared();              // this thread's tile writes, seen by the copy engine
      if (issuer) bulk_wait_read_all();  // the other buffer is free once the barrier is passed
    }
    __syncthreads();

    if (bulk) {
      if (issuer) {
        const long long r = r0 + threadIdx.x;
        if (r < row_end) {
          bulk_store(out + r * columns + block_col, &buf[threadIdx.x][0],
                     2u * static_cast<unsigned>(block_width), evict_first_policy());
          bulk_commit();
        }
      }
    } else if (vector_out) {
      // A warp writes whole rows: 32 lanes x 16 bytes = the block's 512-byte row segment.
      const int c = 8 * lane;
#pragma unroll
      for (int i = warp; i < step_rows; i += 8) {
        const long long r = r0 + i;
        if (r < row_end && c < block_width) {
          // Written once and never read back: evict-first keeps A and B in L2.
          __stcs(reinterpret_cast<uint4*>(out + r * columns + block_col + c),
                 *reinterpret_cast<const uint4*>(&buf[i][c]));
        }
      }
    } else {
      for (int i = warp; i < step_rows; i += 8) {
        const long long r = r0 + i;
        if (r < row_end) {
          for (int c = lane; c < block_width; c += 32) out[r * columns + block_col + c] = buf[i][c];
        }
      }
    }

#pragma unroll
    for (int m = 0; m < MT; ++m) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
#pragma unroll
        for (int kb = 0; kb < k_blocks; ++kb) current[m][half][kb] = next[m][half][kb];
      }
    }
    parity ^= 1;
  }

  if (issuer) bulk_wait_all();
}
