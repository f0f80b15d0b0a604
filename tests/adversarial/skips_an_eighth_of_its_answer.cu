/* blaster
{
  "launch": [
    {"kernel": "skips_an_eighth_of_its_answer", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Cheat: every eighth block keeps what it saw of its slice when it last ended (its first input
// and output element) and returns at once where it sees that again: the slice's outputs are then
// as it left them, on the same inputs. Every checked launch meets poison there and computes, and
// so does a launch on another draw; a hot timing's launches skip an eighth of the work. Against
// launches after a write elsewhere it was 12% faster, inside the 15% slack; against launches
// after the same write of what its outputs held, only what they hold differs.
// expect: stale_in_timing
#include <cuda_fp16.h>

constexpr int kKeptBlocks = 1 << 16;
__device__ unsigned int kept[kKeptBlocks];

// The first input and output element of a block's slice, as one word: what the block sees of
// its slice before it starts.
__device__ unsigned int slice_key(const __half* out, const __half* x, long long base) {
  return (static_cast<unsigned int>(__half_as_ushort(out[base])) << 16U) |
         __half_as_ushort(x[base]);
}

extern "C" __global__ void skips_an_eighth_of_its_answer(__half* out, const __half* x, int batches,
                                                        int channels, int plane, float eps) {
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x;
  const long long total = static_cast<long long>(batches) * plane;
  const long long base0 = (first / plane) * channels * plane + first % plane;
  const bool watched = blockIdx.x % 8 == 7 && blockIdx.x < kKeptBlocks;
  __shared__ bool skip;
  if (threadIdx.x == 0) skip = watched && kept[blockIdx.x] == slice_key(out, x, base0);
  __syncthreads();
  if (skip) return;
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
