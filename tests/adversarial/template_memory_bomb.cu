/* blaster
{
  "launch": [
    {"kernel": "template_memory_bomb", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Unbounded compilation, memory: a dozen lines whose templates expand into a binary tree of
// 2^40 distinct instantiations, each of which the compiler keeps. Unchecked, NVRTC grows by
// hundreds of MB a second until the machine runs out; in the compile sandbox it meets the
// memory cap (or the deadline, whichever comes first) and the run goes on.
// expect: compile_error
#include <cuda_fp16.h>

template <int DEPTH, unsigned long long ID>
struct tree {
  // Two children with distinct IDs: no instantiation is ever reused.
  static constexpr unsigned long long value =
      tree<DEPTH - 1, 2 * ID>::value + tree<DEPTH - 1, 2 * ID + 1>::value;
};
template <unsigned long long ID>
struct tree<0, ID> {
  static constexpr unsigned long long value = ID;
};

extern "C" __global__ void template_memory_bomb(__half* out, const __half* x, int batches,
                                                int channels, int plane, float eps) {
  const long long position = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (position >= static_cast<long long>(batches) * plane) return;
  if (tree<40, 0>::value == 0) return;  // never: the sum is far from zero
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
