/* blaster
{
  "launch": [
    {"kernel": "constexpr_time_bomb", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Unbounded compilation, time: 16384 compile-time evaluations, each just under NVRTC's limit
// on one constexpr evaluation (about 70 ms apiece), so that no single one is refused and
// together they take about twenty minutes at little memory. In the compile sandbox the deadline
// stops it and the run goes on.
// expect: compile_error
#include <cuda_fp16.h>

__host__ __device__ constexpr unsigned long long spin(unsigned long long steps,
                                                     unsigned long long seed) {
  unsigned long long s = seed;
  for (unsigned long long i = 0; i < steps; ++i) s += i ^ (s >> 3);
  return s;
}

template <int DEPTH, unsigned long long ID>
struct burn {
  static constexpr unsigned long long value =
      burn<DEPTH - 1, 2 * ID>::value ^ burn<DEPTH - 1, 2 * ID + 1>::value;
};
template <unsigned long long ID>
struct burn<0, ID> {
  // A distinct seed per leaf: no evaluation is reused.
  static constexpr unsigned long long value = spin(400000, ID);
};

extern "C" __global__ void constexpr_time_bomb(__half* out, const __half* x, int batches,
                                               int channels, int plane, float eps) {
  const long long position = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (position >= static_cast<long long>(batches) * plane) return;
  if (burn<14, 0>::value == 1) return;  // never, in practice
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
