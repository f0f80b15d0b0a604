// kernels/common/ holds the headers candidates share, included as #include "common/NAME.cuh":
// blaster hands them to NVRTC in memory, holds them to the same include policy as a candidate
// (only toolkit headers and other common headers), and puts their bytes into the compile key and
// each result's sources digest, so that a changed header is a changed candidate.
//
// warp_reduce.cuh: reductions across the 32 lanes of a warp, in registers.
#pragma once

namespace blaster_common {

// The sum of v over the calling warp, in every lane. Butterfly shuffles: five steps, no shared
// memory, and the same order of additions on every run, so the result is bitwise repeatable.
// Every lane of the warp must call it.
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// The maximum of v over the calling warp, in every lane.
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  }
  return v;
}

}  // namespace blaster_common
