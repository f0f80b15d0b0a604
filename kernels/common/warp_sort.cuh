// kernels/common/: headers candidates share, as #include "common/NAME.cuh".
//
// warp_sort.cuh: 64 keys sorted highest first in one warp, two a lane, by a bitonic network of
// shuffles: the last step of a top-k selection.
#pragma once

namespace blaster_common {

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
