/* blaster
{
  "launch": [
    {"kernel": "topk_slices<BLOCK, P>", "grid": "T * SPLIT", "block": "BLOCK",
     "shared_bytes": "(min(8 * P * BLOCK, ceil_div(V, SPLIT) + 8) + 64) * 4",
     "args": ["cand", "logits", "V", "K", "SPLIT",
              "min(8 * P * BLOCK, ceil_div(V, SPLIT) + 8) + 64"]},
    {"kernel": "topk_merge<512>", "grid": "T", "block": 512, "shared_bytes": "SPLIT * K * 8",
     "args": ["values", "ids", "cand", "V", "K", "SPLIT"]}
  ],
  "scratch": {"cand": "T * SPLIT * K * 4"},
  "max_dynamic_shared_bytes": "max((min(8 * P * BLOCK, ceil_div(V, SPLIT) + 8) + 64) * 4, SPLIT * K * 8)",
  "params": {"SPLIT": [2, 4, 8, 16, 32, 64], "BLOCK": [256, 512], "P": [2, 4]}
}
*/
// One read of the logits and almost no work per element: each row is cut into SPLIT slices,
// a block per slice. A block streams its slice in 16-byte loads (the next round's in flight
// while this one is filtered) and keeps only elements at or above a threshold that is provably
// below its k-th best: first the least of 64 group maxima, then the k-th best found so far.
// Eight logits are rejected at once by their bf16 maximum, so few reach the exact test and a
// small buffer. A radix select over exact keys (order-preserving value bits, then the position)
// leaves the slice's top k; a second launch merges the rows' SPLIT * k candidates the same way.
#include <cuda_bf16.h>

#include "common/bf16_order.cuh"
#include "common/bf16_pack.cuh"
#include "common/warp_sort.cuh"

using blaster_common::bf16_level;
using blaster_common::bf16_of_level;
using blaster_common::bf16x8;
using blaster_common::make_key;

namespace {

constexpr int kmax = 64;  // k at most; also the number of groups the first threshold uses

// The float a threshold key's value is: below it no logit can reach the key.
__device__ __forceinline__ float key_floor(unsigned key) {
  if (key == 0u) return __int_as_float(0xff800000);  // -infinity: everything passes
  return __uint_as_float(bf16_of_level(key >> 16) << 16);
}

struct select_state {
  unsigned digit;  // the digit of the pass's boundary bin
  unsigned above;  // keys in bins above it
  unsigned bin;    // keys in it
  int taken;
};

// Sorts up to 64 keys of `sel` (count of them, the rest taken as 0) highest first, in one warp:
// a bitonic network on two keys per lane, element e = r * 32 + lane.
__device__ __forceinline__ void warp_sort64(unsigned* sel, int count) {
  const int lane = threadIdx.x % 32;
  unsigned v[2] = {lane < count ? sel[lane] : 0u, lane + 32 < count ? sel[lane + 32] : 0u};
  blaster_common::warp_sort64(v);
  sel[lane] = v[0];
  sel[lane + 32] = v[1];
}

// The k largest of keys[0, n) (distinct, 0 allowed as the least), highest first, into
// sel[0, 64) padded with 0; returns min(n, k). A radix select, a byte a pass from the top, that
// stops at the first pass whose boundary bin must be taken whole; then those keys are gathered
// and sorted. Every thread of the block calls it; it begins and ends with a barrier.
template <int BLOCK>
__device__ int select_top(const unsigned* keys, int n, int k, unsigned* hist, unsigned* sel,
                          select_state& st) {
  __syncthreads();
  if (n <= k) {
    for (int i = threadIdx.x; i < n; i += BLOCK) sel[i] = keys[i];
  } else {
    unsigned prefix = 0u;
    unsigned mask = 0u;
    unsigned need = static_cast<unsigned>(k);  // keys still to take among those matching prefix
    for (int shift = 24; shift >= 0; shift -= 8) {
      for (int i = threadIdx.x; i < 256; i += BLOCK) hist[i] = 0u;
      __syncthreads();
      for (int i = threadIdx.x; i < n; i += BLOCK) {
        const unsigned key = keys[i];
        if ((key & mask) == prefix) atomicAdd(&hist[(key >> shift) & 255u], 1u);
      }
      __syncthreads();
      if (threadIdx.x < 32) {
        static_cast<void>(blaster_common::boundary_bin(hist, need, st.digit, st.above, st.bin));
      }
      __syncthreads();
      prefix |= st.digit << shift;
      mask |= 255u << shift;
      need -= st.above;
      const bool whole = st.bin == need;  // the same in every thread
      __syncthreads();                    // st is rewritten by the next pass
      if (whole) break;
    }
    // Keys whose masked bits exceed prefix, and the `need` matching it: exactly k.
    if (threadIdx.x == 0) st.taken = 0;
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += BLOCK) {
      const unsigned key = keys[i];
      if ((key & mask) >= prefix) sel[atomicAdd(&st.taken, 1)] = key;
    }
  }
  __syncthreads();
  const int count = min(n, k);
  if (threadIdx.x < 32) warp_sort64(sel, count);
  __syncthreads();
  return count;
}

// Slice bounds of a row: SPLIT slices of a whole number of 16-byte packs.
__device__ __forceinline__ int slice_length(int vocabulary, int split) {
  return ((vocabulary + split - 1) / split + 7) / 8 * 8;
}

}  // namespace

// Block b: slice b % split of row b / split; writes that slice's top k keys to
// cand[b * k, b * k + k), highest first, 0 for none. `cap`: the buffer's keys (dynamic shared
// memory), at least one round's elements + 64, so a compaction always makes room.
template <int BLOCK, int P>
__global__ void __launch_bounds__(BLOCK)
    topk_slices(unsigned* __restrict__ cand, const __nv_bfloat16* __restrict__ logits,
                int vocabulary, int k, int split, int cap) {
  extern __shared__ unsigned buf[];
  __shared__ unsigned hist[256];
  __shared__ unsigned sel[kmax];
  __shared__ unsigned group_max[64];
  __shared__ select_state st;
  __shared__ int count;
  __shared__ unsigned threshold;
  if (k > kmax) __trap();

  constexpr int round_packs = P * BLOCK;
  const int lane = threadIdx.x % 32;
  const long long row = blockIdx.x / split;
  const int slice = blockIdx.x % split;
  const int length = slice_length(vocabulary, split);  // at most 65536: positions fit 16 bits
  const int begin = min(vocabulary, slice * length);
  const int n = min(vocabulary, begin + length) - begin;
  const int packs = (n + 7) / 8;
  const int round_keys = min(round_packs * 8, length);  // the most keys a round can add
  const unsigned short* src =
      reinterpret_cast<const unsigned short*>(logits) + row * vocabulary + begin;
  // Whole packs when rows start 16-byte aligned; otherwise elements one by one.
  const bool vector =
      vocabulary % 8 == 0 && reinterpret_cast<unsigned long long>(logits) % 16 == 0;
  if (threadIdx.x == 0) count = 0;

  auto load_round = [&](uint4 (&v)[P], int first) {
#pragma unroll
    for (int j = 0; j < P; ++j) {
      const int p = first + j * BLOCK + threadIdx.x;
      if (p >= packs) continue;
      if (vector) {
        v[j] = __ldcs(reinterpret_cast<const uint4*>(src) + p);  // read once
      } else {
        unsigned h[8];
#pragma unroll
        for (int e = 0; e < 8; ++e) h[e] = 8 * p + e < n ? src[8 * p + e] : 0xFFFFu;
        v[j] = make_uint4(h[0] | h[1] << 16, h[2] | h[3] << 16, h[4] | h[5] << 16,
                          h[6] | h[7] << 16);
      }
    }
  };

  uint4 cur[P];
  load_round(cur, 0);
  for (int first = 0; first < packs; first += round_packs) {
    uint4 next[P];
    if (first + round_packs < packs) load_round(next, first + round_packs);

    if (first == 0) {
      // First threshold: 64 groups of BLOCK / 64 lanes, each group's best key; the least of
      // them has 64 >= k distinct elements at or above it, so anything below is not in the top
      // k. An empty group gives 0: everything passes.
      unsigned best = 0u;
#pragma unroll
      for (int j = 0; j < P; ++j) {
        const int p = j * BLOCK + threadIdx.x;
        if (p >= packs) continue;
        const unsigned words[4] = {cur[j].x, cur[j].y, cur[j].z, cur[j].w};
#pragma unroll
        for (int e = 0; e < 8; ++e) {
          if (8 * p + e < n) {
            best = max(best, make_key((words[e / 2] >> (16 * (e % 2))) & 0xFFFFu, 8 * p + e));
          }
        }
      }
      constexpr int lanes = BLOCK / 64;
#pragma unroll
      for (int off = 1; off < lanes; off <<= 1) {
        best = max(best, __shfl_xor_sync(0xffffffffu, best, off));
      }
      if (lane % lanes == 0) group_max[threadIdx.x / lanes] = best;
      __syncthreads();
      if (threadIdx.x < 32) {
        unsigned least = min(group_max[lane], group_max[lane + 32]);
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
          least = min(least, __shfl_xor_sync(0xffffffffu, least, off));
        }
        if (lane == 0) threshold = least;
      }
    }
    __syncthreads();
    // Every thread decides on the same count before any of this round's keys are added.
    const bool full = count > cap - round_keys;
    __syncthreads();
    if (full) {
      // The buffer might overflow this round: keep its k best; the k-th is the new threshold.
      const int kept = select_top<BLOCK>(buf, count, k, hist, sel, st);
      for (int i = threadIdx.x; i < kept; i += BLOCK) buf[i] = sel[i];
      if (threadIdx.x == 0) {
        count = kept;
        threshold = sel[kept - 1];
      }
      __syncthreads();
    }
    const unsigned tau = threshold;
    const float floor_value = key_floor(tau);

#pragma unroll
    for (int j = 0; j < P; ++j) {
      const int p = first + j * BLOCK + threadIdx.x;
      if (p >= packs) continue;
      bf16x8 u;
      u.v = cur[j];
      if (vector) {
        // Eight at once: skip the pack unless its largest value reaches the threshold's.
        const __nv_bfloat162 m2 =
            __hmax2(__hmax2(u.h2[0], u.h2[1]), __hmax2(u.h2[2], u.h2[3]));
        if (fmaxf(__low2float(m2), __high2float(m2)) < floor_value) continue;
      }
      const unsigned words[4] = {u.v.x, u.v.y, u.v.z, u.v.w};
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        const int position = 8 * p + e;
        const unsigned bits = (words[e / 2] >> (16 * (e % 2))) & 0xFFFFu;
        if (position < n && __uint_as_float(bits << 16) >= floor_value) {
          const unsigned key = make_key(bits, position);
          if (key >= tau) buf[atomicAdd(&count, 1)] = key;
        }
      }
    }
#pragma unroll
    for (int j = 0; j < P; ++j) cur[j] = next[j];
  }

  __syncthreads();
  const int total = count;
  select_top<BLOCK>(buf, total, k, hist, sel, st);
  for (int i = threadIdx.x; i < k; i += BLOCK) {
    cand[static_cast<long long>(blockIdx.x) * k + i] = sel[i];
  }
}

// Row b: the top k of its split * k candidates. A candidate's merge key keeps the value's order
// and replaces the position by 0xFFFF - (its index slice * k + rank): slices are consecutive
// id ranges and each lists equal values in id order, so that index orders equal values by id.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    topk_merge(__nv_bfloat16* __restrict__ values, int* __restrict__ ids,
               const unsigned* __restrict__ cand, int vocabulary, int k, int split) {
  extern __shared__ unsigned smem[];
  __shared__ unsigned hist[256];
  __shared__ unsigned sel[kmax];
  __shared__ select_state st;
  if (k > kmax) __trap();
  const int n = split * k;  // at most 65536, so an index fits 16 bits
  unsigned* original = smem;
  unsigned* merged = smem + n;
  const long long row = blockIdx.x;
  for (int i = threadIdx.x; i < n; i += BLOCK) {
    const unsigned key = cand[row * n + i];
    original[i] = key;
    merged[i] = key == 0u ? 0u : (key & 0xFFFF0000u) | (0xFFFFu - static_cast<unsigned>(i));
  }
  select_top<BLOCK>(merged, n, k, hist, sel, st);
  const int length = slice_length(vocabulary, split);
  for (int i = threadIdx.x; i < k; i += BLOCK) {
    const unsigned index = 0xFFFFu - (sel[i] & 0xFFFFu);
    const unsigned key = index < static_cast<unsigned>(n) ? original[index] : 0u;
    const int id =
        static_cast<int>(index) / k * length + static_cast<int>(0xFFFFu - (key & 0xFFFFu));
    const unsigned short bits = static_cast<unsigned short>(bf16_of_level(key >> 16));
    values[row * k + i] = __ushort_as_bfloat16(bits);
    ids[row * k + i] = id;
  }
}
