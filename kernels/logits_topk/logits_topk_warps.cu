/* blaster
{
  "launch": [
    {"kernel": "topk_warp_slices<WARPS, HELD, NEXT>", "grid": "ceil_div(T * SPLIT, WARPS)",
     "block": "32 * WARPS", "args": ["cand", "logits", "T", "V", "K", "SPLIT"]},
    {"kernel": "topk_warp_merge", "grid": "T", "block": 32, "shared_bytes": "SPLIT * K * 4",
     "args": ["values", "ids", "cand", "V", "K", "SPLIT"]}
  ],
  "scratch": {"cand": "T * SPLIT * K * 4"},
  "max_dynamic_shared_bytes": "SPLIT * K * 4",
  "params": {"SPLIT": [8, 4, 16, 64], "WARPS": [8], "HELD": [8, 4], "NEXT": [1, 0]}
}
*/
// A warp per slice of a row (SPLIT slices a row), and nothing but warp-level synchronization, so
// that a warp busy selecting never holds up another's loads. A warp streams its slice in chunks
// of 32 * HELD 16-byte packs, the next chunk's loads in flight while this one is filtered, and
// keeps in a shared buffer only the elements at or above a threshold that is provably at most
// the slice's k-th best:
//   - first, from the first chunk: each lane's two best pack maxima are 64 distinct elements, so
//     the k-th best of them has k elements at or above it;
//   - then the k-th best key kept so far, raised whenever the buffer holds 2k keys.
// The test costs one bf16x2 max tree and one bf16x2 compare per two packs (16 logits) and a vote;
// only when some lane's pair reaches the threshold does the warp look at single elements.
// A radix select over exact keys (order-preserving value bits, then the position) shrinks the
// buffer to its k best; at the end the slice's k best go out sorted, and a second launch, a warp
// per row, merges the rows' SPLIT * k candidates the same way, after dropping every candidate
// below the best of the slices' k-th keys (each slice has k candidates at or above its own).
#include <cuda_bf16.h>

#include "common/bf16_order.cuh"
#include "common/bf16_pack.cuh"
#include "common/warp_sort.cuh"

using blaster_common::bf16_level;
using blaster_common::bf16_of_level;
using blaster_common::bf16x8;
using blaster_common::boundary_bin;
using blaster_common::make_key;
using blaster_common::warp_sort64;

namespace {

constexpr int kmax = 64;         // k at most
constexpr int capacity = 512;    // keys a warp's buffer holds
constexpr unsigned full_mask = 0xffffffffu;

__device__ __forceinline__ unsigned lanes_below() {
  unsigned m;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
  return m;
}

// The largest of a pack's eight logits, as both halves' candidates.
__device__ __forceinline__ __nv_bfloat162 pack_max(const uint4& v) {
  bf16x8 u;
  u.v = v;
  return __hmax2(__hmax2(u.h2[0], u.h2[1]), __hmax2(u.h2[2], u.h2[3]));
}

// The k (at most 64) largest of keys[0, n) into sel[0, min(n, k)), in no particular order. Keys
// may repeat (the merge's 0s); exactly k are taken all the same. A radix select, a byte a pass
// from the top, that stops at the first pass whose boundary bin is taken whole; `hist` is 256
// words of the warp's own. Every lane of the warp calls it with the same n and k.
__device__ int warp_select(const unsigned* keys, int n, int k, unsigned* hist,
                           unsigned* sel) {
  const int lane = threadIdx.x % 32;
  if (n <= k) {
    for (int i = lane; i < n; i += 32) sel[i] = keys[i];
    __syncwarp();
    return n;
  }
  unsigned prefix = 0u;
  unsigned mask = 0u;
  unsigned need = static_cast<unsigned>(k);  // keys still to take among those matching prefix
  for (int shift = 24; shift >= 0; shift -= 8) {
#pragma unroll
    for (int b = 0; b < 8; ++b) hist[lane * 8 + b] = 0u;
    __syncwarp();
    for (int i = lane; i < n; i += 32) {
      const unsigned key = keys[i];
      if ((key & mask) == prefix) atomicAdd(&hist[(key >> shift) & 255u], 1u);
    }
    __syncwarp();
    unsigned digit = 0u;
    unsigned before = 0u;  // keys in bins above the boundary bin
    unsigned in_bin = 0u;
    const bool holder = boundary_bin(hist, need, digit, before, in_bin);  // exactly one lane
    const int src = __ffs(__ballot_sync(full_mask, holder)) - 1;
    digit = __shfl_sync(full_mask, digit, src);
    before = __shfl_sync(full_mask, before, src);
    in_bin = __shfl_sync(full_mask, in_bin, src);
    __syncwarp();  // hist is cleared again by the next pass
    prefix |= digit << shift;
    mask |= 255u << shift;
    need -= before;
    if (in_bin == need) break;  // the same in every lane
  }
  // Every key whose masked bits exceed prefix (k - need of them), then the first `need` that
  // match it, in index order.
  const unsigned below = lanes_below();
  int out = 0;
  unsigned equal_left = need;
  for (int first = 0; first < n; first += 32) {
    const int i = first + lane;
    const unsigned key = i < n ? keys[i] : 0u;
    const unsigned masked = key & mask;
    const bool greater = i < n && masked > prefix;
    const bool equal = i < n && masked == prefix;
    const unsigned equals = __ballot_sync(full_mask, equal);
    const bool take =
        greater || (equal && static_cast<unsigned>(__popc(equals & below)) < equal_left);
    const unsigned takes = __ballot_sync(full_mask, take);
    if (take) sel[out + __popc(takes & below)] = key;
    out += __popc(takes);
    equal_left -= min(equal_left, static_cast<unsigned>(__popc(equals)));
  }
  __syncwarp();
  return k;
}

// Slice bounds of a row: slices of a whole number of 16-byte packs.
__device__ __forceinline__ int slice_length(int vocabulary, int split) {
  return ((vocabulary + split - 1) / split + 7) / 8 * 8;
}

// What a warp keeps of its slice.
struct warp_space {
  unsigned buf[capacity];
  unsigned hist[256];
  unsigned sel[kmax];
  int count;
};

// The filter's threshold in its three forms: the key, the least value that can reach it as a
// float, and that value in both halves of a bf16 pair.
struct threshold {
  unsigned key;
  float floor;
  __nv_bfloat162 floor2;
};

__device__ __forceinline__ threshold threshold_of(unsigned key) {
  // key 0 (or a value of -infinity) lets everything pass.
  const unsigned bits = key == 0u ? 0xFF80u : bf16_of_level(key >> 16);
  const __nv_bfloat16 b = __ushort_as_bfloat16(static_cast<unsigned short>(bits));
  return {key, __uint_as_float(bits << 16), __halves2bfloat162(b, b)};
}

}  // namespace

// Warp w: slice w % split of row w / split; writes that slice's k best keys to
// cand[w * k, w * k + k), highest first, 0 for none.
template <int WARPS, int HELD, bool NEXT>
__global__ void __launch_bounds__(32 * WARPS)
    topk_warp_slices(unsigned* __restrict__ cand, const __nv_bfloat16* __restrict__ logits,
                     int rows, int vocabulary, int k, int split) {
  static_assert(HELD % 2 == 0, "packs are tested in pairs");
  __shared__ warp_space spaces[WARPS];
  if (k > kmax) __trap();
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const long long w = static_cast<long long>(blockIdx.x) * WARPS + warp;
  if (w >= static_cast<long long>(rows) * split) return;  // a whole warp: no block barrier here
  warp_space& space = spaces[warp];
  volatile int& count = space.count;

  const long long row = w / split;
  const int slice = static_cast<int>(w % split);
  const int length = slice_length(vocabulary, split);
  if (length > 65536) __trap();  // positions fit 16 bits
  const int begin = min(vocabulary, slice * length);
  const int n = min(vocabulary, begin + length) - begin;
  const int packs = (n + 7) / 8;
  constexpr int chunk = 32 * HELD;  // packs a chunk
  const int chunks = (packs + chunk - 1) / chunk;
  const unsigned short* src =
      reinterpret_cast<const unsigned short*>(logits) + row * vocabulary + begin;
  // Whole packs when rows start 16-byte aligned (then n is a whole number of packs); otherwise
  // elements one by one. Past the slice: -infinity, which the position test then drops.
  const bool vector =
      vocabulary % 8 == 0 && reinterpret_cast<unsigned long long>(logits) % 16 == 0;
  const uint4 empty = make_uint4(0xFF80FF80u, 0xFF80FF80u, 0xFF80FF80u, 0xFF80FF80u);
  auto load_chunk = [&](uint4 (&v)[HELD], int c) {
#pragma unroll
    for (int j = 0; j < HELD; ++j) {
      const int p = c * chunk + j * 32 + lane;
      if (vector) {
        v[j] = p < packs ? __ldcs(reinterpret_cast<const uint4*>(src) + p) : empty;  // read once
      } else {
        unsigned h[8];
#pragma unroll
        for (int e = 0; e < 8; ++e) h[e] = 8 * p + e < n ? src[8 * p + e] : 0xFF80u;
        v[j] = make_uint4(h[0] | h[1] << 16, h[2] | h[3] << 16, h[4] | h[5] << 16,
                          h[6] | h[7] << 16);
      }
    }
  };

  if (lane == 0) count = 0;
  __syncwarp();
  threshold tau = threshold_of(0u);

  // The buffer's k best kept, the rest dropped, and the k-th best the new threshold.
  auto compact = [&] {
    const int held = count;
    const int kept = warp_select(space.buf, held, k, space.hist, space.sel);
    for (int i = lane; i < kept; i += 32) space.buf[i] = space.sel[i];
    if (held > k) {
      unsigned least = min(lane < k ? space.sel[lane] : full_mask,
                           lane + 32 < k ? space.sel[lane + 32] : full_mask);
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) {
        least = min(least, __shfl_xor_sync(full_mask, least, off));
      }
      tau = threshold_of(least);
    }
    __syncwarp();
    if (lane == 0) count = kept;
    __syncwarp();
  };

  // Pack p's elements at or above the threshold into the buffer (this lane's share of a step:
  // at most 256 keys a step for the warp).
  auto keep_pack = [&](const uint4& v, int p) {
    const unsigned words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      const unsigned word = words[e / 2];
      const unsigned high = e % 2 ? (word & 0xFFFF0000u) : (word << 16);
      const int position = 8 * p + e;
      if (__uint_as_float(high) >= tau.floor && position < n) {
        const unsigned key = make_key(high >> 16, position);
        if (key >= tau.key) space.buf[atomicAdd(const_cast<int*>(&count), 1)] = key;
      }
    }
  };

  // NEXT: the next chunk's loads go out before this one is filtered (twice the registers);
  // otherwise other warps hide the wait.
  uint4 cur[HELD];
  if (NEXT && chunks > 0) load_chunk(cur, 0);
  for (int c = 0; c < chunks; ++c) {
    uint4 next[HELD];
    if (NEXT) {
      if (c + 1 < chunks) load_chunk(next, c + 1);
    } else {
      load_chunk(cur, c);
    }

    if (c == 0) {
      // First threshold: each lane's two best pack maxima (0 for none) are 64 distinct
      // elements; the k-th best of them has k elements at or above it. Padding is -infinity,
      // never above a real element, so counting it only lowers the threshold.
      unsigned best[2] = {0u, 0u};
#pragma unroll
      for (int j = 0; j < HELD; ++j) {
        const __nv_bfloat162 m = pack_max(cur[j]);
        const unsigned pair = *reinterpret_cast<const unsigned*>(&m);
        const unsigned code = max(bf16_level(pair & 0xFFFFu), bf16_level(pair >> 16));
        if (code > best[0]) {
          best[1] = best[0];
          best[0] = code;
        } else if (code > best[1]) {
          best[1] = code;
        }
      }
      warp_sort64(best);
      const unsigned code = __shfl_sync(full_mask, k > 32 ? best[1] : best[0], (k - 1) % 32);
      tau = threshold_of(code << 16);
    }

    // The pairs that some lane's pair reaches, a bit each (at the pair's first pack): late in a
    // slice, few. Their elements are looked at in one place, which is also the one place that
    // makes room, so that code is not repeated per pack.
    unsigned pending = 0u;
#pragma unroll
    for (int j = 0; j < HELD; j += 2) {
      const __nv_bfloat162 m = __hmax2(pack_max(cur[j]), pack_max(cur[j + 1]));
      if (__any_sync(full_mask, !__hblt2(m, tau.floor2))) pending |= 1u << j;
    }
    while (pending != 0u) {
      const int j = __ffs(pending) - 1;
      pending &= pending - 1u;
      uint4 a = cur[0];
      uint4 b = cur[1];
#pragma unroll
      for (int q = 2; q < HELD; q += 2) {
        if (q == j) {
          a = cur[q];
          b = cur[q + 1];
        }
      }
#pragma unroll 1
      for (int h = 0; h < 2; ++h) {
        const uint4 v = h ? b : a;
        // The threshold may have risen since the pair was tested.
        const bool reach = !__hblt2(pack_max(v), tau.floor2);
        if (!__any_sync(full_mask, reach)) continue;
        if (count > capacity - 256) compact();  // room for this step's keys
        if (reach) keep_pack(v, c * chunk + (j + h) * 32 + lane);
        __syncwarp();
      }
    }
    if (count >= 2 * k) compact();  // raise the threshold

    if (NEXT) {
#pragma unroll
      for (int j = 0; j < HELD; ++j) cur[j] = next[j];
    }
  }

  const int kept = warp_select(space.buf, count, k, space.hist, space.sel);
  unsigned v[2] = {lane < kept ? space.sel[lane] : 0u,
                   lane + 32 < kept ? space.sel[lane + 32] : 0u};
  warp_sort64(v);
  unsigned* out = cand + w * k;
  if (lane < k) out[lane] = v[0];
  if (lane + 32 < k) out[lane + 32] = v[1];
}

// Row b, a warp: the top k of its split * k candidates. A candidate's merge key keeps the value's
// order and replaces the position by 0xFFFF - (its index slice * k + rank): slices are
// consecutive id ranges and each lists equal values in id order, so that index orders equal
// values by id.
__global__ void __launch_bounds__(32)
    topk_warp_merge(__nv_bfloat16* __restrict__ values, int* __restrict__ ids,
                    const unsigned* __restrict__ cand, int vocabulary, int k, int split) {
  extern __shared__ unsigned merged[];  // split * k
  __shared__ unsigned hist[256];
  __shared__ unsigned sel[kmax];
  if (k > kmax) __trap();
  const int lane = threadIdx.x % 32;
  const int n = split * k;  // at most 65536, so an index fits 16 bits
  if (n > 65536) __trap();
  const long long row = blockIdx.x;
  const unsigned* c = cand + row * n;
  auto merge_key = [](unsigned key, int i) {
    return key == 0u ? 0u : (key & 0xFFFF0000u) | (0xFFFFu - static_cast<unsigned>(i));
  };
  // Each slice has k candidates at or above its k-th: nothing below the best of those counts.
  unsigned cutoff = 0u;
  for (int s = lane; s < split; s += 32) {
    cutoff = max(cutoff, merge_key(c[s * k + k - 1], s * k + k - 1));
  }
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    cutoff = max(cutoff, __shfl_xor_sync(full_mask, cutoff, off));
  }
  const unsigned below = lanes_below();
  int m = 0;
  for (int first = 0; first < n; first += 32) {
    const int i = first + lane;
    const unsigned key = i < n ? merge_key(c[i], i) : 0u;
    const bool keep = i < n && key >= cutoff;
    const unsigned keeps = __ballot_sync(full_mask, keep);
    if (keep) merged[m + __popc(keeps & below)] = key;
    m += __popc(keeps);
  }
  __syncwarp();
  const int kept = warp_select(merged, m, k, hist, sel);
  unsigned v[2] = {lane < kept ? sel[lane] : 0u, lane + 32 < kept ? sel[lane + 32] : 0u};
  warp_sort64(v);
  const int length = slice_length(vocabulary, split);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int i = r * 32 + lane;
    if (i >= k) continue;
    const unsigned index = 0xFFFFu - (v[r] & 0xFFFFu);
    const unsigned key = index < static_cast<unsigned>(n) ? c[index] : 0u;
    const int id =
        static_cast<int>(index) / k * length + static_cast<int>(0xFFFFu - (key & 0xFFFFu));
    const auto bits = static_cast<unsigned short>(bf16_of_level(key >> 16));
    values[row * k + i] = __ushort_as_bfloat16(bits);
    ids[row * k + i] = id;
  }
}
