/* blaster
{
  "launch": [
    {"kernel": "uninitialized_shared", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Broken: starts each sum from a shared-memory slot it never initialized (and leaves its own sum
// there for the next block), so results depend on what ran before on the multiprocessor: any
// bits at all, NaN among them.
// expect: wrong_result|nonfinite|nondeterministic
#include <cuda_fp16.h>

extern "C" __global__ void uninitialized_shared(__half* out, const __half* x, int batches, int channels,
                                                int plane, float eps) {
  const long long position = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (position >= static_cast<long long>(batches) * plane) return;
  const long long base = (position / plane) * channels * plane + position % plane;
  __shared__ float partial[256];
  float sum = partial[threadIdx.x];  // never written before this read
  for (int c = 0; c < channels; ++c) {
    const float v = __half2float(x[base + static_cast<long long>(c) * plane]);
    sum += v * v;
  }
  partial[threadIdx.x] = sum;
  const float scale = rsqrtf(sum / channels + eps);
  for (int c = 0; c < channels; ++c) {
    const long long i = base + static_cast<long long>(c) * plane;
    out[i] = __float2half(__half2float(x[i]) * scale);
  }
}
