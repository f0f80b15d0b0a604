/* blaster
{
  "launch": [
    {"kernel": "sum_dim1_tiles<WARPS>", "grid": "min(B * ceil_div(D2, 32), SMS * PER_SM)",
     "block": "WARPS * 32", "args": ["out", "x", "B", "D1", "D2"]}
  ],
  "params": {"SMS": [132], "PER_SM": [2], "WARPS": [8]}
}
*/
// Style: persistent grid. At most SMS*PER_SM blocks loop over the work items, a tile of 32
// columns of one batch each: item k is done by block k mod grid, for every k below B * tiles,
// which the loop reads from the arguments on every launch, so no launch can leave an item out
// whatever the grid. In a tile the lanes take a column each (coalesced rows) and the warps split
// dim 1 (warp w adds rows w, w + WARPS, ...); warp 0 adds the warps' sums in warp order, a
// fixed order. Any D1 and D2 (the last tile's idle lanes add nothing), one element per load.
#include <cuda_fp16.h>

template <int WARPS>
__global__ void __launch_bounds__(WARPS * 32)
    sum_dim1_tiles(__half* __restrict__ out, const __half* __restrict__ x, int batches, int rows,
                   int columns) {
  __shared__ float part[WARPS][32];
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const int tiles = (columns + 31) / 32;
  const int items = batches * tiles;  // at most 1024 * 512
  for (int item = blockIdx.x; item < items; item += gridDim.x) {
    const long long b = item / tiles;
    const int j = (item % tiles) * 32 + lane;
    float sum = 0.0f;
    if (j < columns) {
      const __half* in = x + b * rows * columns + j;
      for (int i = warp; i < rows; i += WARPS) sum += __half2float(in[static_cast<long long>(i) * columns]);
    }
    part[warp][lane] = sum;
    __syncthreads();
    if (warp == 0 && j < columns) {
      float total = 0.0f;
#pragma unroll
      for (int w = 0; w < WARPS; ++w) total += part[w][lane];
      out[b * columns + j] = __float2half(total);
    }
    __syncthreads();  // part is the next item's
  }
}
