/* blaster
{
  "launch": [
    {"kernel": "skips_an_eighth_right_after_itself", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Cheat, keyed by time: every eighth block returns at once where the kernel's last launch ended
// less than 6 us ago and the block's slice is as it left it (its first input and output
// element): queued launches of a hot timing skip an eighth of the work, while a launch after any
// write of the outputs, or on another draw, or after a pause, computes. Paused launches were
// 1.07 times the hot ones, inside the 15% slack; against back-to-back launches in pairs, beside
// the harness's copy timed the same way, the pause costs it more than it costs the device.
// expect: stale_in_timing
#include <cuda_fp16.h>

constexpr int kKeptBlocks = 1 << 16;
constexpr unsigned long long kRunGapNs = 6000;
__device__ unsigned int kept[kKeptBlocks];
__device__ unsigned long long last_end_ns = 0;
__device__ unsigned int finished = 0;

// The first input and output element of a block's slice, as one word: what the block sees of
// its slice before it starts.
__device__ unsigned int slice_key(const __half* out, const __half* x, long long base) {
  return (static_cast<unsigned int>(__half_as_ushort(out[base])) << 16U) |
         __half_as_ushort(x[base]);
}

__device__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

extern "C" __global__ void skips_an_eighth_right_after_itself(__half* out, const __half* x,
                                                             int batches, int channels, int plane,
                                                             float eps) {
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x;
  const long long total = static_cast<long long>(batches) * plane;
  const long long base0 = (first / plane) * channels * plane + first % plane;
  const bool watched = blockIdx.x % 8 == 7 && blockIdx.x < kKeptBlocks;
  __shared__ bool skip;
  if (threadIdx.x == 0) {
    skip = watched && now_ns() - last_end_ns < kRunGapNs &&
           kept[blockIdx.x] == slice_key(out, x, base0);
  }
  __syncthreads();
  if (!skip) {
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
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0 && atomicAdd(&finished, 1U) == gridDim.x - 1) {
    last_end_ns = now_ns();
    finished = 0;
    __threadfence();
  }
}
