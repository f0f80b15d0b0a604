/* blaster
{
  "launch": [
    {"kernel": "relu_packs<BLOCK>", "grid": "ceil_div(B*D, 8*BLOCK)", "block": "BLOCK",
     "args": ["out", "x", "B*D"]}
  ],
  "params": {"BLOCK": [256]}
}
*/
// Style: vectorized. Thread i owns elements 8i .. 8i+7: one 16-byte load and store where both
// buffers start 16-byte aligned (checked at run time, since a pack of 8 halves from an aligned
// base stays aligned) and all 8 elements exist; otherwise, for the last n % 8 elements or a
// misaligned buffer, one element at a time. Every element belongs to exactly one thread, so each
// is written once per launch whatever n is.
#include <cuda_fp16.h>

__device__ __forceinline__ unsigned relu2(unsigned bits) {
  const __half2 v = __hmax2(*reinterpret_cast<const __half2*>(&bits), __float2half2_rn(0.0f));
  return *reinterpret_cast<const unsigned*>(&v);
}

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    relu_packs(__half* __restrict__ out, const __half* __restrict__ x, int n) {
  const long long first = (static_cast<long long>(blockIdx.x) * BLOCK + threadIdx.x) * 8;
  if (first >= n) return;
  const bool aligned =
      ((reinterpret_cast<unsigned long long>(x) | reinterpret_cast<unsigned long long>(out)) %
       16) == 0;
  if (aligned && first + 8 <= n) {
    const uint4 v = __ldg(reinterpret_cast<const uint4*>(x + first));
    *reinterpret_cast<uint4*>(out + first) =
        make_uint4(relu2(v.x), relu2(v.y), relu2(v.z), relu2(v.w));
    return;
  }
  const __half zero = __float2half(0.0f);
  for (long long i = first; i < first + 8 && i < n; ++i) out[i] = __hmax(x[i], zero);
}
