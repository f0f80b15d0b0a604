/* blaster
{
  "launch": [
    {"kernel": "layernorm_resident<THREADS, UNROLL>",
     "grid": "BLOCKS", "block": "THREADS",
     "shared_bytes": "3 * ceil_div(C*H*W, 8 * BLOCKS) * 16",
     "args": ["out", "x", "weight", "bias", "partial", "B", "C*H*W", "eps"]}
  ],
  "cooperative": true,
  "max_dynamic_shared_bytes": "3 * ceil_div(C*H*W, 8 * BLOCKS) * 16",
  "scratch": {"partial": "B * BLOCKS * 8"},
  "params": {"BLOCKS": [132], "THREADS": [512, 1024], "UNROLL": [2, 4]}
}
*/
// One pass over x: a persistent grid of one block per SM (132 on the H200) where each block
// owns the same slice of every row and keeps it in shared memory between reading and writing.
// Rows stream through a ring of three slices with cp.async. A row's statistics meet at a
// split grid barrier: a block arrives with row r + 1's moments, then normalizes row r while the
// others arrive, so neither the barrier nor the loads stand in the way of the stores.
#include <cooperative_groups.h>
#include <cuda_fp16.h>

#include "common/moments.cuh"

namespace {
using blaster_common::merge;
using blaster_common::moments;
using blaster_common::warp_fold;

namespace cg = cooperative_groups;

union pack {
  uint4 v;
  __half h[8];
  __half2 h2[4];
};


// The merge over the block, the same in every thread, in a fixed order.
template <int THREADS>
__device__ moments block_fold(moments m, moments* warps) {
  m = warp_fold(m);
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = m;
  __syncthreads();
  if (threadIdx.x < 32) {
    m = warp_fold(threadIdx.x < THREADS / 32 ? warps[threadIdx.x] : moments{});
    if (threadIdx.x == 0) warps[0] = m;
  }
  __syncthreads();
  m = warps[0];
  __syncthreads();  // warps is reused by the next fold
  return m;
}

// The sum over the block, the same in every thread; THREADS / 32 partials in a fixed order.
template <int THREADS>
__device__ float block_sum(float v, float* warps) {
#pragma unroll
  for (int mask = 16; mask > 0; mask /= 2) v += __shfl_xor_sync(0xffffffffu, v, mask);
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = v;
  __syncthreads();
  float total = 0.0f;
#pragma unroll
  for (int w = 0; w < THREADS / 32; ++w) total += warps[w];
  __syncthreads();
  return total;
}

// Starts copying n elements at `from` into `to`, 16 bytes per copy, into this thread's newest
// group; without 16-byte alignment the thread copies them itself, there and then.
template <int THREADS>
__device__ void fetch(__half* to, const __half* from, int n, bool vector) {
  if (vector) {
    for (int p = threadIdx.x; p < n / 8; p += THREADS) {
      const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(to + p * 8));
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(from + p * 8)
                   : "memory");
    }
  } else {
    for (int i = threadIdx.x; i < n; i += THREADS) to[i] = from[i];
  }
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

template <int PENDING>
__device__ void wait_for_all_but() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
}

__device__ bool vector_ok(int length, const void* a, const void* b, const void* c, const void* d) {
  const auto bits =
      reinterpret_cast<unsigned long long>(a) | reinterpret_cast<unsigned long long>(b) |
      reinterpret_cast<unsigned long long>(c) | reinterpret_cast<unsigned long long>(d);
  return length % 8 == 0 && bits % 16 == 0;
}

}  // namespace

template <int THREADS, int UNROLL>
__global__ void __launch_bounds__(THREADS, 1)
    layernorm_resident(__half* __restrict__ out, const __half* __restrict__ x,
                       const __half* __restrict__ weight, const __half* __restrict__ bias,
                       float2* __restrict__ partial, int rows, int length, float eps) {
  // Row r + 2 loads while row r + 1's moments are taken and row r is written.
  constexpr int STAGES = 3;
  extern __shared__ uint4 ring_storage[];
  __shared__ float sums[THREADS / 32];
  __shared__ moments folds[THREADS / 32];
  __half* ring = reinterpret_cast<__half*>(ring_storage);
  const cg::grid_group grid = cg::this_grid();
  const int blocks = gridDim.x;

  // Slices are whole 16-byte packs; the last blocks may own less of a row, or nothing.
  const int slice = (length + 8 * blocks - 1) / (8 * blocks) * 8;
  const int begin = min(length, static_cast<int>(blockIdx.x) * slice);
  const int n = min(slice, length - begin);
  const bool vector = vector_ok(length, x, out, weight, bias);
  auto stage = [&](int row) { return ring + (row % STAGES) * slice; };
  auto source = [&](int row) { return x + static_cast<long long>(row) * length + begin; };

  // The slice's moments into `partial`, then this block's arrival at the row's barrier. The
  // squares are taken around the slice's own mean: no cancellation for a mean far from 0.
  auto publish = [&](int row) {
    const __half* data = stage(row);
    const uint4* packs = reinterpret_cast<const uint4*>(data);
    float sum = 0.0f;
    if (vector) {
      for (int p = threadIdx.x; p < n / 8; p += THREADS) {
        pack u;
        u.v = packs[p];
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          const float2 f = __half22float2(u.h2[k]);
          sum += f.x + f.y;
        }
      }
    } else {
      for (int i = threadIdx.x; i < n; i += THREADS) sum += __half2float(data[i]);
    }
    const float total = block_sum<THREADS>(sum, sums);
    const float mean = n > 0 ? total / n : 0.0f;
    float squares = 0.0f;
    if (vector) {
      for (int p = threadIdx.x; p < n / 8; p += THREADS) {
        pack u;
        u.v = packs[p];
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          const float2 f = __half22float2(u.h2[k]);
          squares += (f.x - mean) * (f.x - mean) + (f.y - mean) * (f.y - mean);
        }
      }
    } else {
      for (int i = threadIdx.x; i < n; i += THREADS) {
        const float d = __half2float(data[i]) - mean;
        squares += d * d;
      }
    }
    const float m2 = block_sum<THREADS>(squares, sums);
    if (threadIdx.x == 0) partial[static_cast<long long>(row) * blocks + blockIdx.x] = {mean, m2};
    return grid.barrier_arrive();
  };

  for (int r = 0; r < STAGES - 1; ++r) {
    fetch<THREADS>(stage(r), source(r), r < rows ? n : 0, vector);
  }
  wait_for_all_but<STAGES - 2>();
  __syncthreads();
  auto arrived = publish(0);

  for (int r = 0; r < rows; ++r) {
    // The stage this refills held row r - 1, which every thread finished with at the end of the
    // last iteration.
    const int ahead = r + STAGES - 1;
    fetch<THREADS>(stage(ahead), source(ahead), ahead < rows ? n : 0, vector);
    grid.barrier_wait(std::move(arrived));

    // Every block merges the row's slices in the same order, so all agree to the bit.
    moments m = {};
    for (int b = threadIdx.x; b < blocks; b += THREADS) {
      const float2 s = partial[static_cast<long long>(r) * blocks + b];
      const int count = max(0, min(slice, length - b * slice));
      m = merge(m, {static_cast<float>(count), s.x, s.y});
    }
    m = block_fold<THREADS>(m, folds);
    const float scale = rsqrtf(m.m2 / m.count + eps);

    // The next row's moments go out before this row is written: the barrier's wait overlaps it.
    if (r + 1 < rows) {
      wait_for_all_but<STAGES - 2>();
      __syncthreads();
      arrived = publish(r + 1);
    }

    const __half* data = stage(r);
    __half* to = out + static_cast<long long>(r) * length + begin;
    if (vector) {
      const uint4* packs = reinterpret_cast<const uint4*>(data);
      const uint4* w = reinterpret_cast<const uint4*>(weight + begin);
      const uint4* b = reinterpret_cast<const uint4*>(bias + begin);
      // UNROLL packs' weight and bias loads in flight at once: they come from L2, every row.
      for (int first = threadIdx.x; first < n / 8; first += UNROLL * THREADS) {
        pack uw[UNROLL], ub[UNROLL];
#pragma unroll
        for (int j = 0; j < UNROLL; ++j) {
          const int p = first + j * THREADS;
          if (p < n / 8) {
            uw[j].v = __ldg(w + p);
            ub[j].v = __ldg(b + p);
          }
        }
#pragma unroll
        for (int j = 0; j < UNROLL; ++j) {
          const int p = first + j * THREADS;
          if (p >= n / 8) break;
          pack u, o;
          u.v = packs[p];
#pragma unroll
          for (int k = 0; k < 4; ++k) {
            const float2 f = __half22float2(u.h2[k]);
            const float2 fw = __half22float2(uw[j].h2[k]);
            const float2 fb = __half22float2(ub[j].h2[k]);
            o.h2[k] = __floats2half2_rn(fmaf((f.x - m.mean) * scale, fw.x, fb.x),
                                        fmaf((f.y - m.mean) * scale, fw.y, fb.y));
          }
          __stcs(reinterpret_cast<uint4*>(to) + p, o.v);
        }
      }
    } else {
      for (int i = threadIdx.x; i < n; i += THREADS) {
        const float f = __half2float(data[i]);
        to[i] = __float2half_rn(fmaf((f - m.mean) * scale, __half2float(weight[begin + i]),
                                     __half2float(bias[begin + i])));
      }
    }
    __syncthreads();
  }
}
