/* blaster
{
  "launch": [
    {"kernel": "relu_grid_stride<THREADS>", "grid": "min(ceil_div(B*D, 2*THREADS), SMS*PER_SM)",
     "block": "THREADS", "args": ["out", "x", "B*D"]}
  ],
  "params": {"SMS": [132], "PER_SM": [4], "THREADS": [256]}
}
*/
// Style: persistent grid. At most SMS*PER_SM blocks (the H100's and H200's 132 SMs, four blocks
// each), each thread striding over pairs of elements by the grid's whole thread count. It looks
// as if a launch could cover less than the output, but the loop's bound is n, read from the
// arguments on every launch, and pair c is always done by thread c mod (grid * THREADS): every
// element is written in every launch, whatever the grid. Pairs move as one 4-byte __half2 where
// both buffers are 4-byte aligned (checked at run time); an odd last element, or a misaligned
// buffer, goes one element at a time.
#include <cuda_fp16.h>

template <int THREADS>
__global__ void __launch_bounds__(THREADS)
    relu_grid_stride(__half* __restrict__ out, const __half* __restrict__ x, int n) {
  const long long pairs = (static_cast<long long>(n) + 1) / 2;
  const long long stride = static_cast<long long>(gridDim.x) * THREADS;
  const bool aligned =
      ((reinterpret_cast<unsigned long long>(x) | reinterpret_cast<unsigned long long>(out)) % 4) ==
      0;
  const __half zero = __float2half(0.0f);
  for (long long c = static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x; c < pairs;
       c += stride) {
    const long long i = 2 * c;
    if (aligned && i + 2 <= n) {
      const __half2 v = __ldg(reinterpret_cast<const __half2*>(x) + c);
      reinterpret_cast<__half2*>(out)[c] = __hmax2(v, __half2half2(zero));
    } else {
      for (long long k = i; k < i + 2 && k < n; ++k) out[k] = __hmax(x[k], zero);
    }
  }
}
