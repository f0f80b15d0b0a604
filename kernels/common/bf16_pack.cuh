// bf16_pack.cuh: eight bf16 values moved as one 16-byte access, as the inference tasks' bf16
// kernels load and store them.
#pragma once

#include <cuda_bf16.h>

namespace blaster_common {

union bf16x8 {
  uint4 v;
  __nv_bfloat162 h2[4];
};

// Whether every pointer is 16-byte aligned: a row of 8k bf16 values from there is whole packs.
__device__ __forceinline__ bool aligned16(const void* a, const void* b, const void* c = nullptr,
                                          const void* d = nullptr) {
  const auto bits =
      reinterpret_cast<unsigned long long>(a) | reinterpret_cast<unsigned long long>(b) |
      reinterpret_cast<unsigned long long>(c) | reinterpret_cast<unsigned long long>(d);
  return bits % 16 == 0;
}

}  // namespace blaster_common
