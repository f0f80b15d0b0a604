/* blaster
{
  "launch": [
    {"kernel": "gelu_vec<BLOCK, UNROLL, FAST>", "grid": "ceil_div(B*D, 8*BLOCK*UNROLL)",
     "block": "BLOCK", "args": ["out", "x", "B*D"]}
  ],
  "params": {"BLOCK": [128, 256], "UNROLL": [1, 2, 4], "FAST": [1, 0]}
}
*/
// One pass of 16-byte packs, UNROLL per thread with the loads ahead of the stores. FAST=1
// computes x*Phi(x) as x / (1 + 2^(x*p(x^2))), p a degree-4 fit of the normal CDF's logit (max
// error of Phi 3.5e-6, below the f16 output's rounding for every f16 input); FAST=0 uses erff.
#include <cuda_fp16.h>

__device__ __forceinline__ float exp2_approx(float v) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
  return r;
}

template <int FAST>
__device__ __forceinline__ float gelu(float v) {
  if (FAST) {
    const float t = v * v;
    float p = -3.385566970e-06f;
    p = fmaf(p, t, 9.213797603e-05f);
    p = fmaf(p, t, 3.299039672e-04f);
    p = fmaf(p, t, -1.051416621e-01f);
    p = fmaf(p, t, -2.302114248e+00f);
    // Saturates cleanly: 2^(+inf) gives -0 for large negative v, 2^(-inf) gives v.
    return __fdividef(v, 1.0f + exp2_approx(v * p));
  }
  return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
}

template <int FAST>
__device__ __forceinline__ unsigned gelu2(unsigned bits) {
  const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&bits));
  const __half2 r = __floats2half2_rn(gelu<FAST>(f.x), gelu<FAST>(f.y));
  return *reinterpret_cast<const unsigned*>(&r);
}

template <int FAST>
__device__ __forceinline__ uint4 gelu8(const uint4& v) {
  return make_uint4(gelu2<FAST>(v.x), gelu2<FAST>(v.y), gelu2<FAST>(v.z), gelu2<FAST>(v.w));
}

template <int BLOCK, int UNROLL, int FAST>
__global__ void __launch_bounds__(BLOCK)
    gelu_vec(__half* __restrict__ out, const __half* __restrict__ x, int n) {
  // n is an i32, so pack and element indices fit in 32 bits.
  const unsigned packs = static_cast<unsigned>(n) / 8;
  const unsigned block_first = blockIdx.x * (BLOCK * UNROLL);
  const unsigned first = block_first + threadIdx.x;
  const uint4* in = reinterpret_cast<const uint4*>(x);
  uint4* to = reinterpret_cast<uint4*>(out);

  if (block_first + BLOCK * UNROLL <= packs) {
    // A whole block: no test per pack, so all UNROLL loads can issue before the first store.
    uint4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) v[u] = __ldg(in + first + u * BLOCK);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) to[first + u * BLOCK] = gelu8<FAST>(v[u]);
  } else {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const unsigned i = first + u * BLOCK;
      if (i < packs) to[i] = gelu8<FAST>(__ldg(in + i));
    }
  }

  const unsigned rest = static_cast<unsigned>(n) % 8;
  if (blockIdx.x == 0 && threadIdx.x < rest) {
    const unsigned i = packs * 8 + threadIdx.x;
    out[i] = __float2half(gelu<FAST>(__half2float(x[i])));
  }
}
