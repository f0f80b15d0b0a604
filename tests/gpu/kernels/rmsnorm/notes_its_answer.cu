/* blaster
{
  "launch": [
    {"kernel": "notes_its_answer", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Honest, and built like tests/adversarial/skips_an_eighth_of_its_answer.cu: every eighth block
// reads its slice's first input and output element before it starts and keeps them when it ends,
// but computes every time. It must pass the timing's checks of output dependence.
#include <cuda_fp16.h>

constexpr int kKeptBlocks = 1 << 16;
__device__ unsigned int kept[kKeptBlocks];
__device__ unsigned int seen_again;

// The first input and output element of a block's slice, as one word: what the block sees of
// its slice before it starts.
__device__ unsigned int slice_key(const __half* out, const __half* x, long long base) {
  return (static_cast<unsigned int>(__half_as_ushort(out[base])) << 16U) |
         __half_as_ushort(x[base]);
}

extern "C" __global__ void notes_its_answer(__half* out, const __half* x, int batches, int channels,
                                           int plane, float eps) {
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x;
  const long long total = static_cast<long long>(batches) * plane;
  const long long base0 = (first / plane) * channels * plane + first % plane;
  const bool watched = blockIdx.x % 8 == 7 && blockIdx.x < kKeptBlocks;
  if (watched && threadIdx.x == 0 && kept[blockIdx.x] == slice_key(out, x, base0)) {
    atomicAdd(&seen_again, 1U);  // counted, never acted on
  }
  const long long position = first + threadIdx.x;
  if (position < total) {
    const long long base = (position / plane) * channels * plane + position % plane;
    float sum = 0.0f;
    for (int c = 0; c < channels; ++c) {
      const float v = __half2float(x[base + static_cast<long long>(c) * plane]);
      sum += v * v;
    }
    const float scale = rsqrtf(sum / channels + eps);
    for (int c = 0; c < channels; ++c) {
      const long long i = base + static_cast<long long>(c) * plane;
      out[i] = __float2half(__half2float(x[i]) * scale);
    }
  }
  __syncthreads();
  if (watched && threadIdx.x == 0) kept[blockIdx.x] = slice_key(out, x, base0);
}
