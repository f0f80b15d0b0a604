/* blaster
{
  "launch": [
    {"kernel": "relu_vec<BLOCK, UNROLL>", "grid": "ceil_div(B*D, 8*BLOCK*UNROLL)", "block": "BLOCK",
     "args": ["out", "x", "B*D"]}
  ],
  "params": {"BLOCK": [128, 256], "UNROLL": [1, 2, 4]}
}
*/
// One pass, no grid-stride loop: each thread moves UNROLL 16-byte packs of eight halves, its
// loads ahead of its stores; the last n % 8 elements go one per thread of block 0.
#include <cuda_fp16.h>

__device__ __forceinline__ unsigned relu2(unsigned bits) {
  const __half2 v = __hmax2(*reinterpret_cast<const __half2*>(&bits), __float2half2_rn(0.0f));
  return *reinterpret_cast<const unsigned*>(&v);
}

__device__ __forceinline__ uint4 relu8(const uint4& v) {
  return make_uint4(relu2(v.x), relu2(v.y), relu2(v.z), relu2(v.w));
}

template <int BLOCK, int UNROLL>
__global__ void __launch_bounds__(BLOCK)
    relu_vec(__half* __restrict__ out, const __half* __restrict__ x, int n) {
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
    for (int u = 0; u < UNROLL; ++u) to[first + u * BLOCK] = relu8(v[u]);
  } else {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const unsigned i = first + u * BLOCK;
      if (i < packs) to[i] = relu8(__ldg(in + i));
    }
  }

  const unsigned rest = static_cast<unsigned>(n) % 8;
  if (blockIdx.x == 0 && threadIdx.x < rest) {
    const unsigned i = packs * 8 + threadIdx.x;
    out[i] = __hmax(x[i], __float2half(0.0f));
  }
}
