/* blaster
{
  "launch": [
    {"kernel": "fp16_accumulate", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Broken: accumulates the sum of squares in fp16. Over thousands of channels the running sum's
// spacing outgrows the small squares, which are lost, and the scale drifts out of tolerance.
// expect: wrong_result
#include <cuda_fp16.h>

extern "C" __global__ void fp16_accumulate(__half* out, const __half* x, int batches, int channels,
                                           int plane, float eps) {
  const long long position = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (position >= static_cast<long long>(batches) * plane) return;
  const long long base = (position / plane) * channels * plane + position % plane;
  __half sum = __float2half(0.0f);
  for (int c = 0; c < channels; ++c) {
    const __half v = x[base + static_cast<long long>(c) * plane];
    sum = __hadd(sum, __hmul(v, v));
  }
  const float scale = rsqrtf(__half2float(sum) / channels + eps);
  for (int c = 0; c < channels; ++c) {
    const long long i = base + static_cast<long long>(c) * plane;
    out[i] = __float2half(__half2float(x[i]) * scale);
  }
}
