/* blaster
{
  "launch": [
    {"kernel": "top_p_levels<BLOCK>", "grid": "T * max(SPLIT, ceil_div(V, 65528))",
     "block": "BLOCK", "shared_bytes": 131072,
     "args": ["token", "logits", "u", "V", "p", "max(SPLIT, ceil_div(V, 65528))"]}
  ],
  "cluster": ["max(SPLIT, ceil_div(V, 65528))", 1, 1],
  "max_dynamic_shared_bytes": 131072,
  "params": {"SPLIT": [1, 2, 4, 8], "BLOCK": [1024, 512]}
}
*/
// One read of the logits and no float atomics. Every token at one bf16 level has the same
// probability, so a level's mass is its count times exp(level - max): a block needs only an
// integer histogram over all 65536 levels (16-bit counts, two to a word: 128 KB of shared
// memory) and the floats are added afterwards, in a fixed order, per level rather than per token.
// A row is split over a cluster of blocks (slices of at most 65535 tokens, so a count never
// overflows); the blocks read each other's counts through distributed shared memory. From the
// top level down, a block scan of level masses finds the level where the nucleus ends and the
// level of the sample; the index inside that level follows from its count and mass, and one
// block finds that occurrence by a scan in id order over its own slice.
#include <cuda_bf16.h>

#include "common/bf16_order.cuh"
#include "common/bf16_pack.cuh"
#include "common/block_reduce.cuh"
#include "common/cluster.cuh"

using blaster_common::aligned16;
using blaster_common::block_sum;
using blaster_common::cluster_arrive;
using blaster_common::cluster_wait;
using blaster_common::load_remote_float;

namespace {

constexpr int levels = 65536;
constexpr int words = levels / 2;  // two 16-bit counts a word
constexpr int packs_per_round = 2;  // 16-byte loads in flight per thread

// A bf16 logit's level (bf16_order.cuh): the tokens' order is their levels'.
__device__ __forceinline__ int level_of(unsigned bits) {
  return static_cast<int>(blaster_common::bf16_level(bits));
}

// The logit a level stands for.
__device__ __forceinline__ float level_value(int level) {
  return __uint_as_float(blaster_common::bf16_of_level(static_cast<unsigned>(level)) << 16);
}

__device__ __forceinline__ unsigned count_in(unsigned word, int level) {
  return (word >> ((level & 1) * 16)) & 0xFFFFu;
}

// Inclusive prefix sums of v over the block in thread order, and the block's total; a fixed
// order of additions, so the floats repeat to the bit.
template <int BLOCK, typename T>
__device__ __forceinline__ T block_scan(T v, T* part, T& total) {
  constexpr int warps = BLOCK / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp = static_cast<int>(threadIdx.x) / 32;
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const T o = __shfl_up_sync(0xffffffffu, v, off);
    if (lane >= off) v += o;
  }
  if (lane == 31) part[warp] = v;
  __syncthreads();
  if (warp == 0) {
    T w = lane < warps ? part[lane] : T(0);
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
      const T o = __shfl_up_sync(0xffffffffu, w, off);
      if (lane >= off) w += o;
    }
    if (lane < warps) part[lane] = w;
  }
  __syncthreads();
  if (warp > 0) v += part[warp - 1];
  total = part[warps - 1];
  __syncthreads();
  return v;
}

struct level_hit {
  int level;
  int count;    // tokens at the level, over the whole row
  float above;  // the mass of every level above it
  float each;   // one token's mass there
};

// What each block of a row's cluster publishes for the others.
struct block_summary {
  int top;    // its highest level, -1 for an empty slice
  int floor;  // its lowest level
  float mass; // sum of exp(logit - its top logit) over its slice
};

struct row_cluster {
  const unsigned* hist;  // this block's counts; peers keep theirs at the same address
  int split;

  __device__ unsigned word(int rank, int w) const {
    if (split == 1) return hist[w];
    return __float_as_uint(load_remote_float(reinterpret_cast<const float*>(hist + w),
                                             static_cast<unsigned>(rank)));
  }
  // Tokens of the row at `level`; integer sums, so the order of ranks is immaterial.
  __device__ int count(int level) const {
    unsigned c = 0u;
    for (int r = 0; r < split; ++r) c += count_in(word(r, level >> 1), level);
    return static_cast<int>(c);
  }
};

// From `top` down to `floor`, BLOCK levels a step: the first nonempty level at which the
// running mass reaches (reach) / exceeds (!reach) `target`, into `hit`. Returns false where
// rounding leaves every level short; `carry` is then the mass of all of them.
template <int BLOCK>
__device__ bool find_level(const row_cluster& rc, int top, int floor, float top_value,
                           float target, bool reach, float* part, int& first, level_hit& hit,
                           float& carry) {
  carry = 0.0f;
  for (int high = top; high >= floor; high -= BLOCK) {
    if (threadIdx.x == 0) first = BLOCK;  // the scan's barriers order this before any atomicMin
    const int level = high - static_cast<int>(threadIdx.x);
    const int count = level >= floor ? rc.count(level) : 0;
    const float each = count > 0 ? __expf(level_value(level) - top_value) : 0.0f;
    const float mass = static_cast<float>(count) * each;
    float total;
    const float inclusive = block_scan<BLOCK>(mass, part, total);
    const float running = carry + inclusive;
    // Only a nonempty level can be the crossing: a tree scan need not be monotone in the last bit.
    if (count > 0 && (reach ? running >= target : running > target)) {
      atomicMin(&first, static_cast<int>(threadIdx.x));
    }
    __syncthreads();
    const int f = first;
    if (static_cast<int>(threadIdx.x) == f) hit = {level, count, carry + (inclusive - mass), each};
    __syncthreads();
    if (f < BLOCK) return true;
    carry += total;
  }
  return false;
}

}  // namespace

// Block b: slice b % split of row b / split; the row's `split` blocks form one cluster.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK, 1)
    top_p_levels(int* __restrict__ token, const __nv_bfloat16* __restrict__ logits,
                 const float* __restrict__ u, int vocabulary, float p, int split) {
  extern __shared__ uint4 hist4[];  // words / 4 of them: the slice's 16-bit level counts
  unsigned* hist = reinterpret_cast<unsigned*>(hist4);
  __shared__ float part[32];
  __shared__ int ipart[32];
  __shared__ block_summary mine;
  __shared__ int row_top;
  __shared__ int row_floor;
  __shared__ float row_mass;
  __shared__ int first;
  __shared__ level_hit hit;
  __shared__ int before;  // occurrences of the sampled level in earlier slices
  __shared__ int own;     // and in this one

  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid % 32;
  const long long row = blockIdx.x / split;
  const int rank = static_cast<int>(blockIdx.x % split);
  // Slices of whole 16-byte packs; the plan keeps them under 65536 tokens.
  const int length = ((vocabulary + split - 1) / split + 7) / 8 * 8;
  const int begin = min(vocabulary, rank * length);
  const int n = min(vocabulary, begin + length) - begin;
  const int packs = (n + 7) / 8;
  const unsigned short* src =
      reinterpret_cast<const unsigned short*>(logits) + row * vocabulary + begin;
  const bool vector = vocabulary % 8 == 0 && aligned16(logits, logits);

  for (int i = tid; i < words / 4; i += BLOCK) hist4[i] = make_uint4(0u, 0u, 0u, 0u);
  if (tid == 0) {
    mine.top = -1;
    mine.floor = levels;
  }
  __syncthreads();

  auto load = [&](uint4& v, int pk) {
    if (vector) {
      v = __ldg(reinterpret_cast<const uint4*>(src) + pk);
    } else {
      unsigned h[8];
#pragma unroll
      for (int e = 0; e < 8; ++e) h[e] = 8 * pk + e < n ? src[8 * pk + e] : 0u;
      v = make_uint4(h[0] | h[1] << 16, h[2] | h[3] << 16, h[4] | h[5] << 16, h[6] | h[7] << 16);
    }
  };

  // Pass 1: count the slice's tokens per level; the next round's loads fly during the atomics.
  int top = -1;
  int floor = levels;
  {
    constexpr int round = packs_per_round * BLOCK;
    uint4 cur[packs_per_round];
#pragma unroll
    for (int j = 0; j < packs_per_round; ++j) {
      if (j * BLOCK + tid < packs) load(cur[j], j * BLOCK + tid);
    }
    for (int base = 0; base < packs; base += round) {
      uint4 next[packs_per_round];
#pragma unroll
      for (int j = 0; j < packs_per_round; ++j) {
        if (base + round + j * BLOCK + tid < packs) load(next[j], base + round + j * BLOCK + tid);
      }
#pragma unroll
      for (int j = 0; j < packs_per_round; ++j) {
        const int pk = base + j * BLOCK + tid;
        if (pk >= packs) continue;
        const unsigned w[4] = {cur[j].x, cur[j].y, cur[j].z, cur[j].w};
#pragma unroll
        for (int e = 0; e < 8; ++e) {
          if (8 * pk + e >= n) continue;
          const int level = level_of((w[e / 2] >> (16 * (e % 2))) & 0xFFFFu);
          atomicAdd(&hist[level >> 1], 1u << ((level & 1) * 16));
          top = max(top, level);
          floor = min(floor, level);
        }
      }
#pragma unroll
      for (int j = 0; j < packs_per_round; ++j) cur[j] = next[j];
    }
  }
  top = __reduce_max_sync(0xffffffffu, top);
  floor = __reduce_min_sync(0xffffffffu, floor);
  if (lane == 0) {
    atomicMax(&mine.top, top);
    atomicMin(&mine.floor, floor);
  }
  __syncthreads();

  // The slice's mass relative to its own top logit, level by level in a fixed order.
  {
    const int slice_top = mine.top;
    float s = 0.0f;
    if (slice_top >= 0) {
      const float top_value = level_value(slice_top);
      for (int w = (mine.floor >> 1) + tid; w <= (slice_top >> 1); w += BLOCK) {
        const unsigned word = hist[w];
        if (word == 0u) continue;
        if ((word & 0xFFFFu) != 0u) {
          s += static_cast<float>(word & 0xFFFFu) * __expf(level_value(2 * w) - top_value);
        }
        if ((word >> 16) != 0u) {
          s += static_cast<float>(word >> 16) * __expf(level_value(2 * w + 1) - top_value);
        }
      }
    }
    s = block_sum<BLOCK>(s, part);
    if (tid == 0) mine.mass = s;
  }
  if (split > 1) {
    cluster_arrive();
    cluster_wait();
  } else {
    __syncthreads();
  }

  const row_cluster rc{hist, split};
  // The row's top, floor and mass, ranks in order: every block of the row gets the same floats.
  if (tid == 0) {
    auto summary = [&](int r) {
      block_summary b = mine;
      if (split > 1) {
        b.top = __float_as_int(load_remote_float(reinterpret_cast<const float*>(&mine.top), r));
        b.floor =
            __float_as_int(load_remote_float(reinterpret_cast<const float*>(&mine.floor), r));
        b.mass = load_remote_float(&mine.mass, r);
      }
      return b;
    };
    int t = -1;
    int f = levels;
    for (int r = 0; r < split; ++r) {
      const block_summary b = summary(r);
      t = max(t, b.top);
      f = min(f, b.floor);
    }
    const float top_value = level_value(t);
    float z = 0.0f;
    for (int r = 0; r < split; ++r) {
      const block_summary b = summary(r);
      if (b.top >= 0) z += b.mass * __expf(level_value(b.top) - top_value);
    }
    row_top = t;
    row_floor = f;
    row_mass = z;
  }
  __syncthreads();
  const int rtop = row_top;
  const int rfloor = row_floor;
  const float top_value = level_value(rtop);
  const float z = row_mass;

  // The nucleus: down to level ln, its first kn tokens there in id order; its mass.
  int ln;
  int kn;
  float mass;
  {
    float carry;
    if (find_level<BLOCK>(rc, rtop, rfloor, top_value, p * z, true, part, first, hit, carry)) {
      const level_hit h = hit;
      ln = h.level;
      const float q = (p * z - h.above) / h.each;  // tokens of the level needed: ceil(q)
      kn = q >= static_cast<float>(h.count) ? h.count : max(1, static_cast<int>(ceilf(q)));
      mass = h.above + static_cast<float>(kn) * h.each;
    } else {
      // Rounding left the whole row short of p: the nucleus is every token.
      ln = rfloor;
      kn = rc.count(rfloor);
      mass = carry;
    }
  }

  // The sample: the first token of the nucleus whose running mass exceeds u * mass.
  int ls;
  int js;
  {
    const float threshold = u[row] * mass;
    float carry;
    if (find_level<BLOCK>(rc, rtop, ln, top_value, threshold, false, part, first, hit, carry)) {
      const level_hit h = hit;
      ls = h.level;
      const float q = (threshold - h.above) / h.each;  // tokens of the level at or below it
      js = q >= static_cast<float>(h.count) ? h.count
                                             : max(1, static_cast<int>(floorf(q)) + 1);
      if (ls == ln) js = min(js, kn);
    } else {
      ls = ln;
      js = kn;
    }
  }

  if (tid == 0) {
    int b = 0;
    for (int r = 0; r < rank; ++r) b += static_cast<int>(count_in(rc.word(r, ls >> 1), ls));
    before = b;
    own = static_cast<int>(count_in(hist[ls >> 1], ls));
  }
  __syncthreads();
  // Peers may leave once every remote read is done.
  if (split > 1) cluster_arrive();

  // The js-th token of level ls in id order lies in this slice: find it, a chunk at a time.
  int need = js - before;
  if (need >= 1 && need <= own) {
    for (int base = 0; base < packs && need > 0; base += BLOCK) {
      const int pk = base + tid;
      unsigned found = 0u;
      if (pk < packs) {
        uint4 v;
        load(v, pk);
        const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int e = 0; e < 8; ++e) {
          const bool here =
              8 * pk + e < n && level_of((w[e / 2] >> (16 * (e % 2))) & 0xFFFFu) == ls;
          found |= (here ? 1u : 0u) << e;
        }
      }
      const int m = __popc(found);
      int total;
      const int inclusive = block_scan<BLOCK>(m, ipart, total);
      const int exclusive = inclusive - m;
      if (exclusive < need && need <= inclusive) {
        int k = need - exclusive;  // the k-th set bit of found
        int e = 0;
        for (; e < 8; ++e) {
          if ((found >> e) & 1u) {
            if (--k == 0) break;
          }
        }
        token[row] = begin + 8 * pk + e;
      }
      need -= total;
    }
  }
  if (split > 1) cluster_wait();
}
