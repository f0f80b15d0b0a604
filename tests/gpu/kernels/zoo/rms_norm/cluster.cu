/* blaster
{
  "launch": [
    {"kernel": "rms_norm_cluster<THREADS, CLUSTER>", "grid": "T * CLUSTER", "block": "THREADS",
     "args": ["out", "x", "weight", "H", "eps"]}
  ],
  "cluster": ["CLUSTER", 1, 1],
  "params": {"THREADS": [256], "CLUSTER": [2, 4]}
}
*/
// Style: thread-block clusters. A cluster of CLUSTER blocks owns a token, each block a slice of
// it; each block sums its slice's squares, and after the cluster's barrier every block reads
// all CLUSTER partial sums from the others' shared memory (distributed shared memory) in rank
// order, so each gets the same total, bit for bit, and scales its own slice. No block exits
// until all have read (the second barrier). Slices are whole packs of 8, so a slice of a packed
// row starts 16-byte aligned in every block; packs only where H is a multiple of 8 and x, out
// and weight are 16-byte aligned (checked at run time), else one element at a time. A token
// shorter than the cluster leaves some slices empty: those blocks still take part in both
// barriers, adding 0.
#include <cuda_bf16.h>

#include "common/bf16_pack.cuh"
#include "common/block_reduce.cuh"
#include "common/cluster.cuh"

using blaster_common::aligned16;
using blaster_common::bf16x8;
using blaster_common::block_sum;
using blaster_common::cluster_arrive;
using blaster_common::cluster_rank;
using blaster_common::cluster_wait;
using blaster_common::load_remote_float;
using blaster_common::scaled_by_weight;

template <int THREADS, int CLUSTER>
__global__ void __launch_bounds__(THREADS)
    rms_norm_cluster(__nv_bfloat16* __restrict__ out, const __nv_bfloat16* __restrict__ x,
                     const __nv_bfloat16* __restrict__ weight, int hidden, float eps) {
  __shared__ float scratch[THREADS / 32];
  __shared__ float slice_sum;  // read by every block of the cluster

  // A 1-D grid of 1-D clusters: blocks k*CLUSTER .. k*CLUSTER + CLUSTER-1 form cluster k.
  const unsigned rank = cluster_rank();
  const long long row = blockIdx.x / CLUSTER;
  const int slice = (hidden + CLUSTER * 8 - 1) / (CLUSTER * 8) * 8;
  const int begin = min(hidden, static_cast<int>(rank) * slice);
  const int n = min(hidden, begin + slice) - begin;
  const __nv_bfloat16* in = x + row * hidden + begin;
  __nv_bfloat16* to = out + row * hidden + begin;
  const __nv_bfloat16* w = weight + begin;
  // H % 8 == 0 makes begin and n multiples of 8 too.
  const bool packed = hidden % 8 == 0 && aligned16(x, out, weight);

  float sum = 0.0f;
  if (packed) {
    const uint4* from = reinterpret_cast<const uint4*>(in);
    for (int p = threadIdx.x; p < n / 8; p += THREADS) {
      bf16x8 u;
      u.v = from[p];
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const float2 f = __bfloat1622float2(u.h2[k]);
        sum = fmaf(f.x, f.x, fmaf(f.y, f.y, sum));
      }
    }
  } else {
    for (int j = threadIdx.x; j < n; j += THREADS) {
      const float v = __bfloat162float(in[j]);
      sum = fmaf(v, v, sum);
    }
  }
  const float mine = block_sum<THREADS>(sum, scratch);
  if (threadIdx.x == 0) slice_sum = mine;
  cluster_arrive();  // this block's slice_sum is written
  cluster_wait();
  float total = 0.0f;
#pragma unroll
  for (unsigned r = 0; r < CLUSTER; ++r) total += load_remote_float(&slice_sum, r);
  cluster_arrive();  // done reading the others' shared memory
  const float scale = rsqrtf(total / hidden + eps);

  if (packed) {
    const uint4* from = reinterpret_cast<const uint4*>(in);
    const uint4* wp = reinterpret_cast<const uint4*>(w);
    uint4* dst = reinterpret_cast<uint4*>(to);
    for (int p = threadIdx.x; p < n / 8; p += THREADS) {
      dst[p] = scaled_by_weight(from[p], wp[p], scale);
    }
  } else {
    for (int j = threadIdx.x; j < n; j += THREADS) {
      to[j] = __float2bfloat16(__bfloat162float(in[j]) * scale * __bfloat162float(w[j]));
    }
  }
  cluster_wait();  // no block leaves while another may still read its slice_sum
}
