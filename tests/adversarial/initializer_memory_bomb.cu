/* blaster
{
  "launch": [
    {"kernel": "initializer_memory_bomb", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Unbounded compilation, memory, in the back end: one line declares an 8 GiB device array with
// an initializer. The front end keeps it small, but the PTX spells out every byte ("0, " each),
// so the compiler's text of it grows past any memory; in the compile sandbox it meets the
// memory cap within seconds, and the run goes on.
// expect: compile_error
#include <cuda_fp16.h>

__device__ unsigned char ballast[1ULL << 33] = {1};

extern "C" __global__ void initializer_memory_bomb(__half* out, const __half* x, int batches,
                                                   int channels, int plane, float eps) {
  const long long position = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (position >= static_cast<long long>(batches) * plane) return;
  if (ballast[position & 7] == 2) return;  // never: the bytes are 1 and 0
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
