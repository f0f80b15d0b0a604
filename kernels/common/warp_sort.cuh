// kernels/common/: headers candidates share, as #include "common/NAME.cuh".
//
// warp_sort.cuh: the warp-wide steps of a top-k selection: a radix select pass's boundary bin,
// and 64 keys sorted highest first, two a lane, by a bitonic network of shuffles.
#pragma once

namespace blaster_common {

// The bin of a radix select pass that holds the need-th largest key, from a histogram of 256
// bins in shared memory (bin 255 the highest): lane l sums bins 8l .. 8l+7, a shuffle scan from
// the top finds the lane whose bins hold it. That one lane returns true, with the bin's digit,
// the keys in the bins above it and the keys in it. Every lane of the warp must call it.
__device__ __forceinline__ bool boundary_bin(const unsigned* hist, unsigned need, unsigned& digit,
                                             unsigned& above, unsigned& in_bin) {
  const int lane = threadIdx.x % 32;
  unsigned own = 0u;
#pragma unroll
  for (int b = 0; b < 8; ++b) own += hist[lane * 8 + b];
  unsigned from_here = own;
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const unsigned t = __shfl_down_sync(0xffffffffu, from_here, off);
    if (lane + off < 32) from_here += t;
  }
  unsigned before = from_here - own;
  if (!(before < need && need <= from_here)) return false;
  for (int b = 7; b >= 0; --b) {
    const unsigned h = hist[lane * 8 + b];
    if (before + h >= need) {
      digit = static_cast<unsigned>(lane * 8 + b);
      above = before;
      in_bin = h;
      return true;
    }
    before += h;
  }
  return true;  // not reached: the lane's bins hold the need-th key
}

// Element e = r * 32 + lane is v[r]; every lane of the warp must call it.
__device__ __forceinline__ void warp_sort64(unsigned (&v)[2]) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int size = 2; size <= 64; size <<= 1) {
#pragma unroll
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      if (stride == 32) {  // the two halves: within the lane
        const unsigned hi = max(v[0], v[1]);
        v[1] = min(v[0], v[1]);
        v[0] = hi;
        continue;
      }
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int e = r * 32 + lane;
        const unsigned other = __shfl_xor_sync(0xffffffffu, v[r], stride);
        const bool descending = (e & size) == 0;  // the whole array, at size 64
        const bool lower = (e & stride) == 0;
        v[r] = (lower == descending) ? max(v[r], other) : min(v[r], other);
      }
    }
  }
}

}  // namespace blaster_common
