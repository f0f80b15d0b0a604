/* blaster
{
  "launch": [
    {"kernel": "zero_sums", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["sums", "B*H*W"]},
    {"kernel": "accumulate_squares", "grid": ["ceil_div(H*W, 256)", "C", "B"], "block": 256,
     "args": ["sums", "x", "C", "H*W"]},
    {"kernel": "scale_by_sums", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "sums", "B", "C", "H*W", "eps"]}
  ],
  "scratch": {"sums": "B*H*W*4"}
}
*/
// Broken: every channel adds its square into one float with atomicAdd. Float addition is not
// associative and the order of the atomics changes from run to run, so the last bits of the
// sums, and sometimes of the fp16 outputs, do too.
// expect: nondeterministic
#include <cuda_fp16.h>

extern "C" __global__ void zero_sums(float* sums, int positions) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < positions) sums[i] = 0.0f;
}

extern "C" __global__ void accumulate_squares(float* sums, const __half* x, int channels,
                                              int plane) {
  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= plane) return;
  const long long b = blockIdx.z;
  const float v = __half2float(x[(b * channels + blockIdx.y) * plane + p]);
  atomicAdd(&sums[b * plane + p], v * v);
}

extern "C" __global__ void scale_by_sums(__half* out, const __half* x, const float* sums,
                                         int batches, int channels, int plane, float eps) {
  const long long position = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (position >= static_cast<long long>(batches) * plane) return;
  const long long base = (position / plane) * channels * plane + position % plane;
  const float scale = rsqrtf(sums[position] / channels + eps);
  for (int c = 0; c < channels; ++c) {
    const long long i = base + static_cast<long long>(c) * plane;
    out[i] = __float2half(__half2float(x[i]) * scale);
  }
}
