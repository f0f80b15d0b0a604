/* blaster
{
  "launch": [
    {"kernel": "sum_dim1_cluster<WARPS, CLUSTER>", "grid": ["ceil_div(D2, 32) * CLUSTER", "B"],
     "block": "WARPS * 32", "args": ["out", "x", "D1", "D2"]}
  ],
  "cluster": ["CLUSTER", 1, 1],
  "params": {"WARPS": [8], "CLUSTER": [4]}
}
*/
// Style: thread-block clusters. A cluster of CLUSTER blocks sums a tile of 32 columns of one
// batch: block r of the cluster takes the r-th slice of dim 1, its lanes a column each and its
// warps every WARPS-th row of the slice; warp 0 adds the warps' sums in warp order into shared
// memory. After the cluster's barrier, the first block reads the CLUSTER block sums from the
// others' shared memory (distributed shared memory) in rank order and writes the tile; the
// others wait at a second barrier until it has read. Fixed orders throughout, no atomics. Any
// D1 (a slice may be empty: its block adds 0) and D2, one element per load.
#include <cuda_fp16.h>

#include "common/cluster.cuh"

using blaster_common::cluster_arrive;
using blaster_common::cluster_rank;
using blaster_common::cluster_wait;
using blaster_common::load_remote_float;

template <int WARPS, int CLUSTER>
__global__ void __launch_bounds__(WARPS * 32)
    sum_dim1_cluster(__half* __restrict__ out, const __half* __restrict__ x, int rows,
                     int columns) {
  __shared__ float part[WARPS][32];
  __shared__ float block_sum[32];  // read by the cluster's first block
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const unsigned rank = cluster_rank();
  // A cluster spans CLUSTER consecutive blocks in x: one tile, one batch (y).
  const int j = static_cast<int>(blockIdx.x / CLUSTER) * 32 + lane;
  const long long b = blockIdx.y;
  const int slice = (rows + CLUSTER - 1) / CLUSTER;
  const int begin = min(rows, static_cast<int>(rank) * slice);
  const int end = min(rows, begin + slice);

  float sum = 0.0f;
  if (j < columns) {
    const __half* in = x + b * rows * columns + j;
    for (int i = begin + warp; i < end; i += WARPS) {
      sum += __half2float(in[static_cast<long long>(i) * columns]);
    }
  }
  part[warp][lane] = sum;
  __syncthreads();
  if (warp == 0) {
    float total = 0.0f;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) total += part[w][lane];
    block_sum[lane] = total;
  }
  cluster_arrive();  // block_sum is written
  cluster_wait();
  if (rank == 0 && warp == 0 && j < columns) {
    float total = 0.0f;
#pragma unroll
    for (unsigned r = 0; r < CLUSTER; ++r) total += load_remote_float(&block_sum[lane], r);
    out[b * columns + j] = __float2half(total);
  }
  cluster_arrive();  // the first block has read every block_sum
  cluster_wait();
}
