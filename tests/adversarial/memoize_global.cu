/* blaster
{
  "launch": [
    {"kernel": "memoize_global", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Cheat: remembers the first answer it computed in a __device__ array and returns it again for
// any later call of the same size, whatever the inputs are.
// expect: wrong_result
#include <cuda_fp16.h>

constexpr long long kCacheElements = 1 << 20;
__device__ __half cache[kCacheElements];
__device__ long long cached_elements = -1;

extern "C" __global__ void memoize_global(__half* out, const __half* x, int batches, int channels,
                                          int plane, float eps) {
  const long long position = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (position >= static_cast<long long>(batches) * plane) return;
  const long long base = (position / plane) * channels * plane + position % plane;
  const long long n = static_cast<long long>(batches) * channels * plane;
  if (n <= kCacheElements && cached_elements == n) {
    for (int c = 0; c < channels; ++c) {
      const long long i = base + static_cast<long long>(c) * plane;
      out[i] = cache[i];
    }
    return;
  }
  float sum = 0.0f;
  for (int c = 0; c < channels; ++c) {
    const float v = __half2float(x[base + static_cast<long long>(c) * plane]);
    sum += v * v;
  }
  const float scale = rsqrtf(sum / channels + eps);
  for (int c = 0; c < channels; ++c) {
    const long long i = base + static_cast<long long>(c) * plane;
    const __half y = __float2half(__half2float(x[i]) * scale);
    out[i] = y;
    if (n <= kCacheElements) cache[i] = y;
  }
  if (position == 0 && n <= kCacheElements) cached_elements = n;
}
