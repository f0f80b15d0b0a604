/* blaster
{
  "launch": [
    {"kernel": "rmsnorm_reads_twice", "grid": "ceil_div(B*H*W, 8192)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Correct, and reads x twice from DRAM: each block owns 8192 positions and reads all their
// channels once for the sums of squares, then again to scale. Between the two reads of an
// element the whole grid reads about 128 MB, twice the L2, so the second read misses it.
#include <cuda_fp16.h>

namespace {
constexpr int chunk = 8192;
}

extern "C" __global__ void rmsnorm_reads_twice(__half* out, const __half* x, int batches,
                                               int channels, int plane, float eps) {
  __shared__ float scale[chunk];
  const long long positions = static_cast<long long>(batches) * plane;
  const long long first = static_cast<long long>(blockIdx.x) * chunk;
  for (int i = threadIdx.x; i < chunk && first + i < positions; i += blockDim.x) {
    const long long position = first + i;
    const __half* in = x + position / plane * channels * plane + position % plane;
    float sum_squares = 0.0f;
    for (int c = 0; c < channels; ++c) {
      const float v = __half2float(in[static_cast<long long>(c) * plane]);
      sum_squares += v * v;
    }
    scale[i] = rsqrtf(sum_squares / channels + eps);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < chunk && first + i < positions; i += blockDim.x) {
    const long long position = first + i;
    const long long base = position / plane * channels * plane + position % plane;
    for (int c = 0; c < channels; ++c) {
      const long long at = base + static_cast<long long>(c) * plane;
      out[at] = __float2half(__half2float(x[at]) * scale[i]);
    }
  }
}
