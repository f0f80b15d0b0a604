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

namespace {

using blaster_common::bulk_fetch;
using blaster_common::cluster_arrive;
using blaster_common::cluster_rank;
using blaster_common::cluster_wait;
using blaster_common::dynamic_shared_bytes;
using blaster_common::load_remote_float2;
using blaster_common::mbarrier_init;
using blaster_common::mbarrier_wait;

constexpr int cluster_size = 8;
constexpr float log2e = 1.4426950408889634f;

__device__ float minus_infinity() { return __int_as_float(0xff800000); }

// 2^x; subnormal results flush to 0, below any sum's last bit.
__device__ float exp2_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// A partial softmax: the max of some elements (x) and the sum of exp(v - max) over them (y);
// x = -inf holds no element.
using stat = float2;

// Symmetric in a and b, so both partners of a butterfly step get the same bits.
__device__ stat combine(stat a, stat b) {
  if (a.x == minus_infinity()) return b;
  if (b.x == minus_infinity()) return a;
  const float m = fmaxf(a.x, b.x);
  return {m, a.y * exp2_ftz((a.x - m) * log2e) + b.y * exp2_ftz((b.x - m) * log2e)};
}

// The warp's stats combined, the same bits in every lane.
__device__ stat warp_combine(stat v) {
#pragma unroll
  for (int mask = 16; mask > 0; mask /= 2) {
    v = combine(v, {__shfl_xor_sync(0xffffffffu, v.x, mask),
                    __shfl_xor_sync(0xffffffffu, v.y, mask)});
  }
  return v;
}

union pack {
  uint4 v;
  __half h[8];
  __half2 h2[4];
};

__device__ uint4 empty_pack() { return make_uint4(0xfc00fc00u, 0xfc00fc00u, 0xfc00fc00u, 0xfc00fc00u); }

// Elements 8p to 8p + 7 of a slice of n; those at or past n read as -infinity, which no max and
// no sum notices. `vector`: the slice starts 16-byte aligned.
__device__ uint4 load_pack(const __half* slice, int n, int p, bool vector) {
  const int first = p * 8;
  if (vector && first + 8 <= n) return *reinterpret_cast<const uint4*>(slice + first);
  pack u;
#pragma unroll
  for (int k = 0; k < 8; ++k) u.h[k] = first + k < n ? slice[first + k] : __ushort_as_half(0xfc00);
  return u.v;
}

// Packs into a running (max, sum): their max first, then one exponential per element.
template <int COUNT>
__device__ void fold_packs(stat& acc, const uint4 (&v)[COUNT]) {
  __half2 hm = __half2half2(__ushort_as_half(0xfc00));
#pragma unroll
  for (int q = 0; q < COUNT; ++q) {
    pack u;
    u.v = v[q];
    hm = __hmax2(hm, __hmax2(__hmax2(u.h2[0], u.h2[1]), __hmax2(u.h2[2], u.h2[3])));
  }
  const float gm = fmaxf(__low2float(hm), __high2float(hm));
  if (gm == minus_infinity()) return;  // nothing here; would make the shift +inf below
  if (gm > acc.x) {
    acc.y *= exp2_ftz((acc.x - gm) * log2e);  // acc.x = -inf: 0 * 0
    acc.x = gm;
  }
  const float shift = -acc.x * log2e;
  float e[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
  for (int q = 0; q < COUNT; ++q) {
    pack u;
    u.v = v[q];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float2 f = __half22float2(u.h2[k]);
      e[k] += exp2_ftz(fmaf(f.x, log2e, shift)) + exp2_ftz(fmaf(f.y, log2e, shift));
    }
  }
  acc.y += (e[0] + e[1]) + (e[2] + e[3]);
}

// This thread's packs tid, tid + THREADS, ... of the slice, in a fixed order.
template <int THREADS>
__device__ stat thread_stat(const __half* slice, int n, bool vector) {
  constexpr int group = 2;  // packs in flight per thread
  const int packs = (n + 7) / 8;
  stat acc = {minus_infinity(), 0.0f};
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
__device__ void store_slice(__half* to, const __half* slice, int n, bool vector, stat total) {
  const float shift = -total.x * log2e;
  const float inverse = 1.0f / total.y;
  const int packs = (n + 7) / 8;
  for (int p = threadIdx.x; p < packs; p += THREADS) {
    pack in;
    in.v = load_pack(slice, n, p, vector);
    pack result;
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
  __shared__ stat warp_stats[THREADS / 32];
  __shared__ stat posted[2];  // this block's stat of the last two rows, read by the cluster
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
    const stat mine = warp_combine(thread_stat<THREADS>(data, n, vector));
    if (lane == 0) warp_stats[warp] = mine;
    __syncthreads();
    if (threadIdx.x == 0) {
      stat block = warp_stats[0];
#pragma unroll
      for (int w = 1; w < THREADS / 32; ++w) block = combine(block, warp_stats[w]);
      posted[j % 2] = block;
    }
    // A block rewrites posted[j % 2] for row j + 2 only after every block has passed the
    // barrier of row j + 1, and so has read it for row j.
    cluster_arrive();
    cluster_wait();
    // Lane r reads block r's stat; the butterfly gives every lane of every warp of every block
    // the same bits.
    const stat total = warp_combine(lane < cluster_size
                                        ? load_remote_float2(&posted[j % 2], lane)
                                        : stat{minus_infinity(), 0.0f});

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
