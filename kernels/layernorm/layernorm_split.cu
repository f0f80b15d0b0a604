/* blaster
{
  "launch": [
    {"kernel": "layernorm_chunk_stats<THREADS, PACKS>",
     "grid": "B * ceil_div(C*H*W, THREADS*PACKS*8)", "block": "THREADS",
     "args": ["partial", "x", "B", "C*H*W"]},
    {"kernel": "layernorm_apply<THREADS, PACKS>",
     "grid": "B * ceil_div(C*H*W, THREADS*PACKS*8)", "block": "THREADS",
     "args": ["out", "x", "weight", "bias", "partial", "B", "C*H*W", "eps"]}
  ],
  "scratch": {"partial": "B * ceil_div(C*H*W, THREADS*PACKS*8) * 8"},
  "params": {"THREADS": [512, 256], "PACKS": [4, 2]}
}
*/
// A row of 4 Mi elements fits on no chip, so two kernels: the first reads x once with 16-byte
// loads and writes each chunk's (mean, M2) from registers, the second merges a row's chunks
// (Chan's formula, a fixed order) and normalizes. The second walks the blocks in reverse, so the
// chunks the first read last are still in L2; its stores stream past L2, and weight and bias are
// read by all rows of a chunk at once, so they come from DRAM once.
#include <cuda_fp16.h>

#include "common/moments.cuh"

namespace {
using blaster_common::merge;
using blaster_common::moments;
using blaster_common::warp_fold;

union pack {
  uint4 v;
  __half h[8];
  __half2 h2[4];
};

// Thread t holds packs t, t + THREADS, ... of 8 elements of a chunk starting at `in`. Elements at
// or past n read as 0 and are left out of every sum by count.
template <int THREADS, int PACKS, bool LAST_USE>
__device__ void load_chunk(uint4 (&data)[PACKS], const __half* in, int n, bool vector) {
#pragma unroll
  for (int p = 0; p < PACKS; ++p) {
    const int first = (p * THREADS + static_cast<int>(threadIdx.x)) * 8;
    if (vector && first + 8 <= n) {
      const auto* at = reinterpret_cast<const uint4*>(in + first);
      data[p] = LAST_USE ? __ldcs(at) : __ldg(at);
    } else {
      pack u;
#pragma unroll
      for (int k = 0; k < 8; ++k) u.h[k] = first + k < n ? in[first + k] : __float2half(0.0f);
      data[p] = u.v;
    }
  }
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
  __syncthreads();  // warps is reused by the next sum
  return total;
}

// The chunk a block owns: chunk-major order, rows of one chunk side by side.
struct place {
  long long row;
  int chunk;
  int chunks;
};

__device__ place place_of(int block, int rows, int length, int chunk_elements, bool reverse) {
  const int chunks = (length + chunk_elements - 1) / chunk_elements;
  const int index = reverse ? rows * chunks - 1 - block : block;
  return {index % rows, index / rows, chunks};
}

__device__ bool vector_ok(int length, const void* a, const void* b, const void* c, const void* d) {
  const auto bits =
      reinterpret_cast<unsigned long long>(a) | reinterpret_cast<unsigned long long>(b) |
      reinterpret_cast<unsigned long long>(c) | reinterpret_cast<unsigned long long>(d);
  return length % 8 == 0 && bits % 16 == 0;
}


}  // namespace

template <int THREADS, int PACKS>
__global__ void __launch_bounds__(THREADS)
    layernorm_chunk_stats(float2* __restrict__ partial, const __half* __restrict__ x, int rows,
                          int length) {
  constexpr int chunk_elements = THREADS * PACKS * 8;
  __shared__ float warps[THREADS / 32];
  const place at = place_of(blockIdx.x, rows, length, chunk_elements, false);
  const int begin = at.chunk * chunk_elements;
  const int n = min(chunk_elements, length - begin);
  const bool vector = vector_ok(length, x, x, x, x);

  uint4 data[PACKS];
  load_chunk<THREADS, PACKS, false>(data, x + at.row * length + begin, n, vector);
  float sum = 0.0f;
#pragma unroll
  for (int p = 0; p < PACKS; ++p) {
    pack u;
    u.v = data[p];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float2 f = __half22float2(u.h2[k]);
      sum += f.x + f.y;
    }
  }
  const float mean = block_sum<THREADS>(sum, warps) / n;
  // Squares around the chunk's own mean: no cancellation however far the mean is from zero.
  float squares = 0.0f;
#pragma unroll
  for (int p = 0; p < PACKS; ++p) {
    const int first = (p * THREADS + static_cast<int>(threadIdx.x)) * 8;
    pack u;
    u.v = data[p];
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const float d = first + k < n ? __half2float(u.h[k]) - mean : 0.0f;
      squares += d * d;
    }
  }
  const float m2 = block_sum<THREADS>(squares, warps);
  if (threadIdx.x == 0) partial[at.row * at.chunks + at.chunk] = make_float2(mean, m2);
}

// With two packs a thread fits in 64 registers: 1024 threads per SM, so one block's merge hides
// behind the other's loads.
template <int THREADS, int PACKS>
__global__ void __launch_bounds__(THREADS, PACKS <= 2 ? 1024 / THREADS : 1)
    layernorm_apply(__half* __restrict__ out, const __half* __restrict__ x,
                    const __half* __restrict__ weight, const __half* __restrict__ bias,
                    const float2* __restrict__ partial, int rows, int length, float eps) {
  constexpr int chunk_elements = THREADS * PACKS * 8;
  __shared__ float2 row_stat;
  __shared__ moments warp_moments[THREADS / 32];
  const place at = place_of(blockIdx.x, rows, length, chunk_elements, true);
  const int begin = at.chunk * chunk_elements;
  const int n = min(chunk_elements, length - begin);
  const bool vector = vector_ok(length, x, out, weight, bias);

  // The loads go out first; merging the row's statistics overlaps them.
  uint4 data[PACKS];
  uint4 w[PACKS];
  uint4 b[PACKS];
  load_chunk<THREADS, PACKS, true>(data, x + at.row * length + begin, n, vector);
  load_chunk<THREADS, PACKS, false>(w, weight + begin, n, vector);
  load_chunk<THREADS, PACKS, false>(b, bias + begin, n, vector);

  // Thread t merges chunks t, t + THREADS, ... in order, then each warp folds pairwise and warp 0
  // folds the warps: one load per thread instead of a serial walk over the row's chunks, and the
  // same order in every block of the row, so all of them agree to the bit.
  const int lane = threadIdx.x % 32;
  const float2* stats = partial + at.row * at.chunks;
  moments m = {};
  for (int c = threadIdx.x; c < at.chunks; c += THREADS) {
    const float2 s = stats[c];
    m = merge(m, {static_cast<float>(min(chunk_elements, length - c * chunk_elements)), s.x, s.y});
  }
  m = warp_fold(m);
  if (lane == 0) warp_moments[threadIdx.x / 32] = m;
  __syncthreads();
  if (threadIdx.x < 32) {
    m = warp_fold(lane < THREADS / 32 ? warp_moments[lane] : moments{});
    if (lane == 0) row_stat = make_float2(m.mean, rsqrtf(m.m2 / m.count + eps));
  }
  __syncthreads();
  const float mean = row_stat.x;
  const float scale = row_stat.y;

  __half* to = out + at.row * length + begin;
#pragma unroll
  for (int p = 0; p < PACKS; ++p) {
    const int first = (p * THREADS + static_cast<int>(threadIdx.x)) * 8;
    if (first >= n) continue;
    pack u, uw, ub, r;
    u.v = data[p];
    uw.v = w[p];
    ub.v = b[p];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float2 f = __half22float2(u.h2[k]);
      const float2 fw = __half22float2(uw.h2[k]);
      const float2 fb = __half22float2(ub.h2[k]);
      r.h2[k] = __floats2half2_rn(fmaf((f.x - mean) * scale, fw.x, fb.x),
                                  fmaf((f.y - mean) * scale, fw.y, fb.y));
    }
    if (vector && first + 8 <= n) {
      __stcs(reinterpret_cast<uint4*>(to + first), r.v);
    } else {
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        if (first + k < n) to[first + k] = r.h[k];
      }
    }
  }
}
