/* blaster
{
  "launch": [
    {"kernel": "cluster_launch", "grid": "2 * ceil_div(B*H*W, 512)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ],
  "cluster": [2, 1, 1]
}
*/
// Honest, and launched in clusters of two blocks by its plan's "cluster" key: it writes its
// output only where the hardware says the cluster has two blocks. Passes only if the harness
// launches it with the plan's cluster attribute.
// expect: passed
#include <cuda_fp16.h>

extern "C" __global__ void cluster_launch(__half* out, const __half* x, int batches, int channels,
                                          int plane, float eps) {
  unsigned blocks_in_cluster = 0;
  asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(blocks_in_cluster));
  if (blocks_in_cluster != 2) return;
  const long long position = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
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
}
