/* blaster
{
  "launch": [
    {"kernel": "times_its_cached_rows", "grid": "T", "block": 256,
     "args": ["out", "x", "weight", "H", "eps"]}
  ]
}
*/
// Honest, and built like skips_an_eighth_when_cached.cu: every eighth block times loads of its
// row's output and input and of its own kept word, and compares what it kept of the row, counting
// the rows it could have skipped, but computes every row every time. It must pass the timing's
// checks of output dependence.
// expect: passed
#include <cuda_bf16.h>

#include "common/block_reduce.cuh"

using blaster_common::block_sum;

constexpr int kKeptRows = 1 << 16;
__device__ unsigned int kept[kKeptRows];
__device__ unsigned int could_skip;  // rows found as they were left, in the L2

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

extern "C" __global__ void times_its_cached_rows(__nv_bfloat16* out, const __nv_bfloat16* x,
                                                 const __nv_bfloat16* weight, int hidden,
                                                 float eps) {
  const long long row = static_cast<long long>(blockIdx.x) * hidden;
  const bool watched = blockIdx.x % 8 == 7 && blockIdx.x < kKeptRows;
  __shared__ float warp_sums[256 / 32];
  if (watched && threadIdx.x == 0 && was_cached(out + row) && was_cached(x + row) &&
      was_cached(&kept[blockIdx.x]) && kept[blockIdx.x] == row_key(out, x, row)) {
    atomicAdd(&could_skip, 1U);
  }
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
