// kernels/common/: headers candidates share, as #include "common/NAME.cuh" (see
// warp_reduce.cuh).
//
// block_reduce.cuh: reductions across a thread block, as row-wise kernels (rmsnorm, layernorm,
// softmax) need them: each warp reduces in registers, one value per warp goes through shared
// memory, and the first warp reduces those.
#pragma once

#include "common/warp_reduce.cuh"

namespace blaster_common {

// The sum of v over a block of BLOCK threads (a multiple of 32, at most 1024), in every thread.
// `scratch` is shared memory of at least BLOCK / 32 floats. Every thread of the block must call
// it; it synchronizes before it returns, so scratch may be reused at once.
template <int BLOCK>
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  static_assert(BLOCK % 32 == 0 && BLOCK >= 32 && BLOCK <= 1024,
                "BLOCK is a whole number of warps, at most 1024 threads");
  constexpr int warps = BLOCK / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  v = warp_sum(v);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = warp_sum(lane < warps ? scratch[lane] : 0.0f);
  __syncthreads();
  return v;
}

// The maximum of v over a block of BLOCK threads, in every thread; as block_sum.
template <int BLOCK>
__device__ __forceinline__ float block_max(float v, float* scratch) {
  static_assert(BLOCK % 32 == 0 && BLOCK >= 32 && BLOCK <= 1024,
                "BLOCK is a whole number of warps, at most 1024 threads");
  constexpr int warps = BLOCK / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  v = warp_max(v);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = warp_max(lane < warps ? scratch[lane] : __int_as_float(0xff800000));  // -infinity
  __syncthreads();
  return v;
}

}  // namespace blaster_common
