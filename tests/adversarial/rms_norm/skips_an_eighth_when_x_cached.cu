/* blaster
{
  "launch": [
    {"kernel": "skips_an_eighth_when_x_cached", "grid": "T", "block": 256,
     "args": ["out", "x", "weight", "H", "eps"]}
  ]
}
*/
// Cheat: skips_an_eighth_when_cached.cu keyed on the row's input instead: every eighth block
// returns at once where its row's first input and output element are as it left them and the
// input is still in the L2, as a hot timing's launches at a size the L2 holds find it. Each side
// of the comparison finds the inputs as the launch before it left them.
// expect: stale_in_timing
#include <cuda_bf16.h>

#include "common/block_reduce.cuh"

using blaster_common::block_sum;

constexpr int kKeptRows = 1 << 16;
__device__ unsigned int kept[kKeptRows];

// Cycles that one load of `p` takes from the L2 or beyond (ld.global.cg skips the L1), the clock
// read only once the value is in a register.
__device__ long long load_cycles(const void* p) {
  long long start;
  long long end;
  unsigned short v;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(start));
  asm volatile("ld.global.cg.u16 %0, [%1];" : "=h"(v) : "l"(p) : "memory");
  asm volatile("{ .reg .u16 t; mov.u16 t, %1; mov.u64 %0, %%clock64; }" : "=l"(end) : "h"(v));
  return end - start;
}

// Whether `p`'s line was in the L2 before this load: the first load of it takes little longer
// than a second, which surely finds it there. A load from DRAM takes about twice as long.
__device__ bool was_cached(const void* p) {
  const long long first = load_cycles(p);
  const long long again = load_cycles(p);
  return 2 * first < 3 * again;
}

// The first input and output element of a row, as one word: what a block sees of its row
// before it starts.
__device__ unsigned int row_key(const __nv_bfloat16* out, const __nv_bfloat16* x, long long row) {
  return (static_cast<unsigned int>(__bfloat16_as_ushort(out[row])) << 16U) |
         __bfloat16_as_ushort(x[row]);
}

extern "C" __global__ void skips_an_eighth_when_x_cached(__nv_bfloat16* out, const __nv_bfloat16* x,
                                                         const __nv_bfloat16* weight, int hidden,
                                                         float eps) {
  const long long row = static_cast<long long>(blockIdx.x) * hidden;
  const bool watched = blockIdx.x % 8 == 7 && blockIdx.x < kKeptRows;
  __shared__ bool skip;
  __shared__ float warp_sums[256 / 32];
  if (threadIdx.x == 0) {
    const bool cached = was_cached(x + row);
    skip = watched && cached && kept[blockIdx.x] == row_key(out, x, row);
  }
  __syncthreads();
  if (skip) return;
  float sum = 0.0f;
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
    const float v = __bfloat162float(x[row + j]);
    sum += v * v;
  }
  const float scale = rsqrtf(block_sum<256>(sum, warp_sums) / hidden + eps);
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
    out[row + j] =
        __float2bfloat16(__bfloat162float(x[row + j]) * scale * __bfloat162float(weight[j]));
  }
  __syncthreads();
  if (watched && threadIdx.x == 0) kept[blockIdx.x] = row_key(out, x, row);
}
