/* blaster
{
  "launch": [
    {"kernel": "cross_entropy_cluster<THREADS>", "grid": "CLUSTER", "block": "THREADS",
     "args": ["loss", "logits", "targets", "N", "C"]}
  ],
  "params": {"CLUSTER": [8], "THREADS": [512, 256]}
}
*/
// One launch and no scratch, for the small canonical case: a single cluster splits the rows, a
// thread per short row (a warp per long row) adds its losses in a fixed order, and the blocks
// add their sums through distributed shared memory, so the mean is reproducible to the bit.
// Large inputs run on CLUSTER multiprocessors only; cross_entropy_split.cu is for those.
#include <cuda_fp16.h>

#include "common/cluster.cuh"

#ifndef CLUSTER
#define CLUSTER 8
#endif

namespace {

using blaster_common::cluster_arrive;
using blaster_common::cluster_rank;
using blaster_common::cluster_wait;
using blaster_common::load_remote_float;

constexpr float log2e = 1.4426950408889634f;
constexpr int thread_row_classes = 32;  // up to this many classes, a thread owns a row

__device__ float minus_infinity() { return __int_as_float(0xff800000); }

// -log_softmax(row)[target] for a short row, by one thread; the second pass hits L1.
__device__ float row_loss_thread(const __half* row, int classes, long long target) {
  float m = minus_infinity();
  for (int j = 0; j < classes; ++j) m = fmaxf(m, __half2float(__ldg(row + j)));
  const float shift = -m * log2e;
  float s = 0.0f;
  for (int j = 0; j < classes; ++j) s += exp2f(fmaf(__half2float(__ldg(row + j)), log2e, shift));
  return m + logf(s) - __half2float(__ldg(row + target));
}

union pack {
  uint4 v;
  __half2 h2[4];
};

// A lane's running (max, sum of exp(v - max)), folded in one element group at a time.
struct online {
  float m = __int_as_float(0xff800000);
  float s = 0.0f;

  __device__ void add(float group_max, float group_sum_at_max) {
    const float next = fmaxf(m, group_max);
    s = s * exp2f((m - next) * log2e) + group_sum_at_max * exp2f((group_max - next) * log2e);
    m = next;
  }
};

// Symmetric in a and b, so every lane of a butterfly gets the same bits.
__device__ online combine(online a, online b) {
  if (a.m == minus_infinity()) return b;
  if (b.m == minus_infinity()) return a;
  online r;
  r.m = fmaxf(a.m, b.m);
  r.s = a.s * exp2f((a.m - r.m) * log2e) + b.s * exp2f((b.m - r.m) * log2e);
  return r;
}

// -log_softmax(row)[target] for a long row, by a warp, returned to every lane.
__device__ float row_loss_warp(const __half* row, int classes, long long target, bool vector) {
  const int lane = threadIdx.x % 32;
  online acc;
  if (vector) {
    for (int first = lane * 8; first < classes; first += 32 * 8) {
      pack u;
      u.v = __ldg(reinterpret_cast<const uint4*>(row + first));
      __half2 hm = __hmax2(__hmax2(u.h2[0], u.h2[1]), __hmax2(u.h2[2], u.h2[3]));
      const float gm = fmaxf(__low2float(hm), __high2float(hm));
      const float shift = -gm * log2e;
      float gs = 0.0f;
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const float2 f = __half22float2(u.h2[k]);
        gs += exp2f(fmaf(f.x, log2e, shift)) + exp2f(fmaf(f.y, log2e, shift));
      }
      acc.add(gm, gs);
    }
  } else {
    for (int j = lane; j < classes; j += 32) acc.add(__half2float(__ldg(row + j)), 1.0f);
  }
#pragma unroll
  for (int mask = 16; mask > 0; mask /= 2) {
    online other;
    other.m = __shfl_xor_sync(0xffffffffu, acc.m, mask);
    other.s = __shfl_xor_sync(0xffffffffu, acc.s, mask);
    acc = combine(acc, other);
  }
  return acc.m + logf(acc.s) - __half2float(__ldg(row + target));
}

}  // namespace

template <int THREADS>
__global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS)
    cross_entropy_cluster(float* __restrict__ loss, const __half* __restrict__ logits,
                          const long long* __restrict__ targets, int rows, int classes) {
  __shared__ float warps[THREADS / 32];
  __shared__ float block_total;
  const unsigned rank = cluster_rank();
  const int per_block = (rows + CLUSTER - 1) / CLUSTER;
  const int first_row = min(rows, static_cast<int>(rank) * per_block);
  const int last_row = min(rows, first_row + per_block);

  float sum = 0.0f;  // this thread's rows, in row order
  if (classes <= thread_row_classes) {
    for (int i = first_row + threadIdx.x; i < last_row; i += THREADS) {
      sum += row_loss_thread(logits + static_cast<long long>(i) * classes, classes, targets[i]);
    }
  } else {
    const bool vector = classes % 8 == 0 && reinterpret_cast<unsigned long long>(logits) % 16 == 0;
    const int warp = threadIdx.x / 32;
    for (int i = first_row + warp; i < last_row; i += THREADS / 32) {
      const float l =
          row_loss_warp(logits + static_cast<long long>(i) * classes, classes, targets[i], vector);
      if (threadIdx.x % 32 == 0) sum += l;
    }
  }

#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.0f;
    for (int w = 0; w < THREADS / 32; ++w) total += warps[w];
    block_total = total;
  }
  cluster_arrive();
  cluster_wait();
  if (rank == 0 && threadIdx.x == 0) {
    float total = 0.0f;
    for (unsigned r = 0; r < CLUSTER; ++r) total += load_remote_float(&block_total, r);
    loss[0] = total / rows;
  }
  // No block leaves while rank 0 may still read its shared memory.
  cluster_arrive();
  cluster_wait();
}
