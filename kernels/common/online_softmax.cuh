// online_softmax.cuh: a running softmax denominator in fp32, the max of the elements seen and
// the sum of exp(v - max) over them, folded in from packs of 8 fp16 values and combined across
// lanes, warps and blocks. Exponentials are ex2.approx with subnormals flushed to 0, below any
// sum's last bit. Every combination here is symmetric or in a fixed order, so a result has the
// same bits in every lane that computes it and on every run.
#pragma once

#include <cuda_fp16.h>

namespace blaster_common {

constexpr float log2e = 1.4426950408889634f;

__device__ __forceinline__ float minus_infinity() { return __int_as_float(0xff800000); }

// 2^x; subnormal results flush to 0.
__device__ __forceinline__ float exp2_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// m = -infinity holds no element (and s = 0).
struct online {
  float m;
  float s;
};

__device__ __forceinline__ online online_empty() { return {minus_infinity(), 0.0f}; }

// Eight fp16 values in 16 bytes.
union half_pack {
  uint4 v;
  __half h[8];
  __half2 h2[4];
};

// A pack that no max and no sum notices: eight -infinity.
__device__ __forceinline__ uint4 empty_pack() {
  return make_uint4(0xfc00fc00u, 0xfc00fc00u, 0xfc00fc00u, 0xfc00fc00u);
}

// One element into a running (max, sum): the sum is rescaled only when the max rises.
__device__ __forceinline__ void fold_value(online& acc, float v) {
  if (v > acc.m) {
    acc.s = acc.s * exp2_ftz((acc.m - v) * log2e) + 1.0f;  // acc.m = -inf: 0 * 0 + 1
    acc.m = v;
  } else if (v != minus_infinity()) {
    acc.s += exp2_ftz((v - acc.m) * log2e);
  }
}

// COUNT packs into a running (max, sum): their max first, then one exponential per element.
template <int COUNT>
__device__ __forceinline__ void fold_packs(online& acc, const uint4 (&v)[COUNT]) {
  __half2 hm = __half2half2(__ushort_as_half(0xfc00));
#pragma unroll
  for (int q = 0; q < COUNT; ++q) {
    half_pack u;
    u.v = v[q];
    hm = __hmax2(hm, __hmax2(__hmax2(u.h2[0], u.h2[1]), __hmax2(u.h2[2], u.h2[3])));
  }
  const float gm = fmaxf(__low2float(hm), __high2float(hm));
  if (gm == minus_infinity()) return;  // nothing here; would make the shift +inf below
  if (gm > acc.m) {
    acc.s *= exp2_ftz((acc.m - gm) * log2e);  // acc.m = -inf: 0 * 0
    acc.m = gm;
  }
  const float shift = -acc.m * log2e;
  float e[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
  for (int q = 0; q < COUNT; ++q) {
    half_pack u;
    u.v = v[q];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float2 f = __half22float2(u.h2[k]);
      e[k] += exp2_ftz(fmaf(f.x, log2e, shift)) + exp2_ftz(fmaf(f.y, log2e, shift));
    }
  }
  acc.s += (e[0] + e[1]) + (e[2] + e[3]);
}

// Two partial results as one; symmetric in a and b.
__device__ __forceinline__ online combine(online a, online b) {
  if (a.m == minus_infinity()) return b;
  if (b.m == minus_infinity()) return a;
  const float m = fmaxf(a.m, b.m);
  return {m, a.s * exp2_ftz((a.m - m) * log2e) + b.s * exp2_ftz((b.m - m) * log2e)};
}

// The 32 lanes' (max, sum) combined, the same bits in every lane: a max butterfly, one rescale
// per lane, then a sum butterfly (a + b = b + a, so both partners of each step agree). Every
// lane of the warp must call it.
__device__ __forceinline__ online warp_total(online v) {
  float m = v.m;
#pragma unroll
  for (int mask = 16; mask > 0; mask /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, mask));
  float s = v.m == minus_infinity() ? 0.0f : v.s * exp2_ftz((v.m - m) * log2e);
#pragma unroll
  for (int mask = 16; mask > 0; mask /= 2) s += __shfl_xor_sync(0xffffffffu, s, mask);
  return {m, s};
}

}  // namespace blaster_common
