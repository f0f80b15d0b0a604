// bf16_pack.cuh: bf16 values moved as one access (eight in 16 bytes, or fewer in narrower words),
// as the inference tasks' bf16 kernels load and store them.
#pragma once

#include <cuda_bf16.h>

namespace blaster_common {

union bf16x8 {
  uint4 v;
  __nv_bfloat162 h2[4];
};

// The word that holds N bf16 values: one access of 2N bytes.
template <int N>
struct bf16_word;
template <>
struct bf16_word<8> {
  using type = uint4;
};
template <>
struct bf16_word<4> {
  using type = uint2;
};
template <>
struct bf16_word<2> {
  using type = unsigned;
};
template <>
struct bf16_word<1> {
  using type = unsigned short;
};

// N bf16 values as that word, as pairs for the bf16x2 math, or one by one.
template <int N>
union bf16_pack {
  typename bf16_word<N>::type v;
  __nv_bfloat162 h2[N > 1 ? N / 2 : 1];
  __nv_bfloat16 h[N];
};

// Eight values times scale times their eight weights, rounded to bf16: a normalization's output.
__device__ __forceinline__ uint4 scaled_by_weight(uint4 values, uint4 weights, float scale) {
  bf16x8 u, g, o;
  u.v = values;
  g.v = weights;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float2 f = __bfloat1622float2(u.h2[k]);
    const float2 fw = __bfloat1622float2(g.h2[k]);
    o.h2[k] = __floats2bfloat162_rn(f.x * scale * fw.x, f.y * scale * fw.y);
  }
  return o.v;
}

// Whether every pointer is aligned to BYTES: a row of whole packs of N bf16 values from there
// (BYTES = 2N) moves in whole words.
template <int BYTES>
__device__ __forceinline__ bool aligned_to(const void* a, const void* b, const void* c = nullptr,
                                           const void* d = nullptr, const void* e = nullptr) {
  const auto bits =
      reinterpret_cast<unsigned long long>(a) | reinterpret_cast<unsigned long long>(b) |
      reinterpret_cast<unsigned long long>(c) | reinterpret_cast<unsigned long long>(d) |
      reinterpret_cast<unsigned long long>(e);
  return bits % BYTES == 0;
}

__device__ __forceinline__ bool aligned16(const void* a, const void* b, const void* c = nullptr,
                                          const void* d = nullptr) {
  return aligned_to<16>(a, b, c, d);
}

}  // namespace blaster_common
