/* blaster
{
  "launch": [
    {"kernel": "softmax_ring<THREADS, STAGES>", "grid": "min(B, CLUSTERS) * 8",
     "block": "THREADS", "shared_bytes": "min(STAGES * ceil_div(D, 64) * 16, 196608)",
     "args": ["out", "x", "B", "D"]}
  ],
  "max_dynamic_shared_bytes": "min(STAGES * ceil_div(D, 64) * 16, 196608)",
  "params": {"STAGES": [2, 1], "CLUSTERS": [14, 4096], "THREADS": [512]}
}
*/
// Reads and writes at once: clusters of 8 blocks, each cluster taking rows in turn, each block
// an eighth of the row in shared memory. With two stages of up to 96 KiB the copy engine fetches
// the block's slice of the next row while the block folds the current one into (max, sum),
// trades it through distributed shared memory and writes the result; with one stage, two blocks
// share an SM and overlap the same way. One read and one write of every element. CLUSTERS
// bounds the grid: a resident grid (14 clusters of 8 one-block SMs are what the H200 holds at
// once; 16 ran twice as long), or one cluster per row for the hardware to schedule. Rows that
// cannot be staged (unaligned, or past the stages' size) stream from global memory twice.
#include <cuda_fp16.h>

#include "common/bulk_copy.cuh"
#include "common/cluster.cuh"
#include "common/online_softmax.cuh"

namespace {

using blaster_common::bulk_fetch;
using blaster_common::cluster_arrive;
using blaster_common::cluster_rank;
using blaster_common::cluster_wait;
using blaster_common::combine;
using blaster_common::dynamic_shared_bytes;
using blaster_common::empty_pack;
using blaster_common::exp2_ftz;
using blaster_common::fold_packs;
using blaster_common::half_pack;
using blaster_common::load_remote_float2;
using blaster_common::log2e;
using blaster_common::mbarrier_init;
using blaster_common::mbarrier_wait;
using blaster_common::online;
using blaster_common::online_empty;
using blaster_common::warp_total;

constexpr int cluster_size = 8;

// Elements 8p to 8p + 7 of a slice of n; those at or past n read as -infinity, which no max and
// no sum notices. `vector`: the slice starts 16-byte aligned.
__device__ uint4 load_pack(const __half* slice, int n, int p, bool vector) {
  const int first = p * 8;
  if (vector && first + 8 <= n) return *reinterpret_cast<const uint4*>(slice + first);
  half_pack u;
#pragma unroll
  for (int k = 0; k < 8; ++k) u.h[k] = first + k < n ? slice[first + k] : __ushort_as_half(0xfc00);
  return u.v;
}

// This thread's packs tid, tid + THREADS, ... of the slice, in a fixed order.
template <int THREADS>
__device__ online thread_stat(const __half* slice, int n, bool vector) {
  constexpr int group = 2;  // packs in flight per thread
  const int packs = (n + 7) / 8;
  online acc = online_empty();
  for (int base = threadIdx.x; base < packs; base += THREADS * group) {
    uint4 v[group];
#pragma unroll
    for (int q = 0; q < group; ++q) {
      const int p = base + q * THREADS;
      v[q] = p < packs ? load_pack(slice, n, p, vector) : empty_pack();
    }
    fold_packs<group>(acc, v);
  }
  return acc;
}

template <int THREADS>
__device__ void store_slice(__half* to, const __half* slice, int n, bool vector, online total) {
  const float shift = -total.m * log2e;
  const float inverse = 1.0f / total.s;
  const int packs = (n + 7) / 8;
  for (int p = threadIdx.x; p < packs; p += THREADS) {
    half_pack in;
    in.v = load_pack(slice, n, p, vector);
    half_pack result;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float2 f = __half22float2(in.h2[k]);
      result.h2[k] = __floats2half2_rn(exp2_ftz(fmaf(f.x, log2e, shift)) * inverse,
                                       exp2_ftz(fmaf(f.y, log2e, shift)) * inverse);
    }
    const int first = p * 8;
    if (vector && first + 8 <= n) {
      __stcs(reinterpret_cast<uint4*>(to + first), result.v);
    } else {
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        if (first + k < n) to[first + k] = result.h[k];
      }
    }
  }
}

}  // namespace

template <int THREADS, int STAGES>
__global__ void __cluster_dims__(cluster_size, 1, 1) __launch_bounds__(THREADS, STAGES == 1 ? 2 : 1)
    softmax_ring(__half* __restrict__ out, const __half* __restrict__ x, int rows, int length) {
  extern __shared__ uint4 stage_data[];
  __shared__ unsigned long long full[STAGES];
  __shared__ online warp_stats[THREADS / 32];
  __shared__ float2 posted[2];  // this block's stat of the last two rows, read by the cluster
  const unsigned rank = cluster_rank();
  const int cluster = static_cast<int>(blockIdx.x) / cluster_size;
  const int clusters = static_cast<int>(gridDim.x) / cluster_size;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  // Slices are a multiple of 8 elements, so that 16-byte accesses stay aligned in every block.
  const int slice = (length + cluster_size * 8 - 1) / (cluster_size * 8) * 8;
  const int begin = min(length, static_cast<int>(rank) * slice);
  const int n = min(length, begin + slice) - begin;
  const bool vector =
      length % 8 == 0 &&
      ((reinterpret_cast<unsigned long long>(x) | reinterpret_cast<unsigned long long>(out)) % 16 ==
       0);
  // The same in every block of the cluster, as the barriers below need.
  const bool staged =
      vector && dynamic_shared_bytes() >= static_cast<unsigned>(STAGES) * slice * sizeof(__half);
  const unsigned slice_bytes = static_cast<unsigned>(n) * sizeof(__half);
  auto stage = [&](int s) {
    return reinterpret_cast<__half*>(stage_data) + static_cast<long long>(s) * slice;
  };
  auto row_at = [&](int j) { return cluster + static_cast<long long>(j) * clusters; };

  if (staged && threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) mbarrier_init(&full[s]);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    for (int s = 0; s < STAGES && row_at(s) < rows && n > 0; ++s) {
      bulk_fetch(&full[s], stage(s), x + row_at(s) * length + begin, slice_bytes);
    }
  }
  __syncthreads();

  for (int j = 0; row_at(j) < rows; ++j) {
    const long long row = row_at(j);
    const int s = j % STAGES;
    if (staged && n > 0) mbarrier_wait(&full[s], (j / STAGES) & 1);
    const __half* data = staged ? stage(s) : x + row * length + begin;

    // This block's (max, sum), combined in a fixed order, posted for the cluster.
    const online mine = warp_total(thread_stat<THREADS>(data, n, vector));
    if (lane == 0) warp_stats[warp] = mine;
    __syncthreads();
    if (threadIdx.x == 0) {
      online block = warp_stats[0];
#pragma unroll
      for (int w = 1; w < THREADS / 32; ++w) block = combine(block, warp_stats[w]);
      posted[j % 2] = {block.m, block.s};
    }
    // A block rewrites posted[j % 2] for row j + 2 only after every block has passed the
    // barrier of row j + 1, and so has read it for row j.
    cluster_arrive();
    cluster_wait();
    // Lane r reads block r's stat; warp_total gives every lane of every warp of every block the
    // same bits.
    online total = online_empty();
    if (lane < cluster_size) {
      const float2 posted_by = load_remote_float2(&posted[j % 2], lane);
      total = {posted_by.x, posted_by.y};
    }
    total = warp_total(total);

    store_slice<THREADS>(out + row * length + begin, data, n, vector, total);

    if (staged) {
      // Every thread's reads of the stage come before the copy that refills it.
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      __syncthreads();
      if (threadIdx.x == 0 && n > 0 && row_at(j + STAGES) < rows) {
        bulk_fetch(&full[s], stage(s), x + row_at(j + STAGES) * length + begin, slice_bytes);
      }
    }
  }
  // No block leaves while another may still read its posted stats.
  cluster_arrive();
  cluster_wait();
}
