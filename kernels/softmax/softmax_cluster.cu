/* blaster
{
  "launch": [
    {"kernel": "softmax_cluster<THREADS, PACKS>", "grid": "B*CLUSTER", "block": "THREADS",
     "args": ["out", "x", "B", "D"]}
  ],
  "params": {"CLUSTER": [8], "THREADS": [256, 1024], "PACKS": [1, 6]}
}
*/
// One pass over memory: a cluster of CLUSTER blocks owns a row, each thread holds its slice in
// registers (16-byte loads), the blocks trade (max, sum) through distributed shared memory, and
// every block writes its slice from registers. Rows past the cluster's registers stream twice.
#include <cuda_fp16.h>

#include "common/cluster.cuh"

#ifndef CLUSTER
#define CLUSTER 8
#endif

namespace {

using blaster_common::cluster_arrive;
using blaster_common::cluster_rank;
using blaster_common::cluster_wait;
using blaster_common::load_remote_float2;

constexpr float log2e = 1.4426950408889634f;

// A partial softmax: the max of some elements and the sum of exp(v - max) over them. Aligned
// for the one 8-byte load that reads it from another block.
struct __align__(8) stat {
  float m;
  float s;
};

__device__ float minus_infinity() { return __int_as_float(0xff800000); }

// Symmetric in a and b, so every lane of a butterfly gets the same bits.
__device__ stat combine(stat a, stat b) {
  if (a.m == minus_infinity()) return b;
  if (b.m == minus_infinity()) return a;
  const float m = fmaxf(a.m, b.m);
  return {m, a.s * exp2f((a.m - m) * log2e) + b.s * exp2f((b.m - m) * log2e)};
}

__device__ stat shuffle(stat v, int mask) {
  return {__shfl_xor_sync(0xffffffffu, v.m, mask), __shfl_xor_sync(0xffffffffu, v.s, mask)};
}

// Reads the stat that block `rank` of the cluster keeps where this block keeps `local`.
__device__ stat load_remote(const stat* local, unsigned rank) {
  const float2 v = load_remote_float2(reinterpret_cast<const float2*>(local), rank);
  return {v.x, v.y};
}

union pack {
  uint4 v;
  __half h[8];
  __half2 h2[4];
};

// Thread t holds packs t, t + THREADS, ... of 8 elements of a tile starting at `in`; elements at
// or past n read as -infinity, which no max and no sum notices.
template <int THREADS, int PACKS>
__device__ void load_tile(uint4 (&data)[PACKS], const __half* in, int n, bool vector) {
#pragma unroll
  for (int p = 0; p < PACKS; ++p) {
    const int first = (p * THREADS + static_cast<int>(threadIdx.x)) * 8;
    if (vector && first + 8 <= n) {
      data[p] = *reinterpret_cast<const uint4*>(in + first);
    } else {
      pack u;
#pragma unroll
      for (int k = 0; k < 8; ++k) u.h[k] = first + k < n ? in[first + k] : __ushort_as_half(0xfc00);
      data[p] = u.v;
    }
  }
}

template <int PACKS>
__device__ float max_of(const uint4 (&data)[PACKS]) {
  __half2 m = __half2half2(__ushort_as_half(0xfc00));
#pragma unroll
  for (int p = 0; p < PACKS; ++p) {
    pack u;
    u.v = data[p];
#pragma unroll
    for (int k = 0; k < 4; ++k) m = __hmax2(m, u.h2[k]);
  }
  return fmaxf(__low2float(m), __high2float(m));
}

// The sum of exp(v - m) over the tile, m finite.
template <int PACKS>
__device__ float sum_exp(const uint4 (&data)[PACKS], float m) {
  const float shift = -m * log2e;
  float s = 0.0f;
#pragma unroll
  for (int p = 0; p < PACKS; ++p) {
    pack u;
    u.v = data[p];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float2 f = __half22float2(u.h2[k]);
      s += exp2f(fmaf(f.x, log2e, shift)) + exp2f(fmaf(f.y, log2e, shift));
    }
  }
  return s;
}

template <int THREADS, int PACKS>
__device__ void store_tile(__half* to, const uint4 (&data)[PACKS], int n, bool vector, float m,
                           float inverse) {
  const float shift = -m * log2e;
#pragma unroll
  for (int p = 0; p < PACKS; ++p) {
    const int first = (p * THREADS + static_cast<int>(threadIdx.x)) * 8;
    if (first >= n) continue;
    pack in;
    in.v = data[p];
    pack result;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float2 f = __half22float2(in.h2[k]);
      result.h2[k] = __floats2half2_rn(exp2f(fmaf(f.x, log2e, shift)) * inverse,
                                       exp2f(fmaf(f.y, log2e, shift)) * inverse);
    }
    if (vector && first + 8 <= n) {
      *reinterpret_cast<uint4*>(to + first) = result.v;
    } else {
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        if (first + k < n) to[first + k] = result.h[k];
      }
    }
  }
}

// The block's combined stat, returned to every thread; the order of combination is fixed.
template <int THREADS>
__device__ stat block_combine(stat v) {
  __shared__ stat warps[THREADS / 32];
#pragma unroll
  for (int mask = 16; mask > 0; mask /= 2) v = combine(v, shuffle(v, mask));
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = v;
  __syncthreads();
  stat total = warps[0];
#pragma unroll
  for (int w = 1; w < THREADS / 32; ++w) total = combine(total, warps[w]);
  return total;
}

}  // namespace

template <int THREADS, int PACKS>
__global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS)
    softmax_cluster(__half* __restrict__ out, const __half* __restrict__ x, int rows, int length) {
  constexpr int tile = THREADS * PACKS * 8;
  __shared__ stat shared_stat;
  const unsigned rank = cluster_rank();
  const long long row = blockIdx.x / CLUSTER;
  // Slices are a multiple of 8 elements, so that 16-byte loads stay aligned in every block.
  const int slice = (length + CLUSTER * 8 - 1) / (CLUSTER * 8) * 8;
  const int begin = min(length, static_cast<int>(rank) * slice);
  const int n = min(length, begin + slice) - begin;
  const __half* in = x + row * length + begin;
  __half* to = out + row * length + begin;
  const bool vector =
      length % 8 == 0 &&
      ((reinterpret_cast<unsigned long long>(x) | reinterpret_cast<unsigned long long>(out)) % 16 ==
       0);

  uint4 data[PACKS];
  stat mine = {minus_infinity(), 0.0f};
  // The same branch in every block of the cluster: slice is the same for all of them.
  const bool in_registers = slice <= tile;
  if (in_registers) {
    load_tile<THREADS, PACKS>(data, in, n, vector);
    mine.m = max_of(data);
    if (mine.m != minus_infinity()) mine.s = sum_exp(data, mine.m);
  } else {
    for (int t = 0; t < n; t += tile) {
      load_tile<THREADS, PACKS>(data, in + t, n - t, vector);
      const float m = max_of(data);
      if (m == minus_infinity()) continue;
      mine = combine(mine, {m, sum_exp(data, m)});
    }
  }

  const stat block = block_combine<THREADS>(mine);
  if (threadIdx.x == 0) shared_stat = block;
  cluster_arrive();
  cluster_wait();
  stat total = load_remote(&shared_stat, 0);
#pragma unroll
  for (unsigned r = 1; r < CLUSTER; ++r) total = combine(total, load_remote(&shared_stat, r));
  // This block is done reading the others' shared memory; it waits for them before it exits.
  cluster_arrive();

  const float inverse = 1.0f / total.s;
  if (in_registers) {
    store_tile<THREADS, PACKS>(to, data, n, vector, total.m, inverse);
  } else {
    for (int t = 0; t < n; t += tile) {
      load_tile<THREADS, PACKS>(data, in + t, n - t, vector);
      store_tile<THREADS, PACKS>(to + t, data, n - t, vector, total.m, inverse);
    }
  }
  cluster_wait();
}
