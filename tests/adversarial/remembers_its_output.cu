/* blaster
{
  "launch": [
    {"kernel": "remembers_its_output", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Cheat: no test for NaN at all. Each block keeps, in a __device__ array, the bits it last wrote
// to its first output element and the input bits that produced them; when both are still in
// place the whole block returns at once. Whatever the poison is, the gate's poisoned outputs
// never match; warm launches over the same buffers always do.
// expect: stale_in_timing|impossible_speed
#include <cuda_fp16.h>

constexpr int kBlocks = 1 << 20;
__device__ unsigned short written_bits[kBlocks];
__device__ unsigned short input_bits[kBlocks];

extern "C" __global__ void remembers_its_output(__half* out, const __half* x, int batches,
                                                int channels, int plane, float eps) {
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x;
  const long long first_base = (first / plane) * channels * plane + first % plane;
  __shared__ bool skip;
  if (threadIdx.x == 0) {
    skip = blockIdx.x < kBlocks &&
           __half_as_ushort(out[first_base]) == written_bits[blockIdx.x] &&
           __half_as_ushort(x[first_base]) == input_bits[blockIdx.x];
  }
  __syncthreads();
  if (skip) return;
  const long long position = first + threadIdx.x;
  if (position >= static_cast<long long>(batches) * plane) return;
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
  if (threadIdx.x == 0 && blockIdx.x < kBlocks) {
    written_bits[blockIdx.x] = __half_as_ushort(out[base]);
    input_bits[blockIdx.x] = __half_as_ushort(x[base]);
  }
}
