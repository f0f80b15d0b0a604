/* blaster
{
  "launch": [
    {"kernel": "probe_host_file", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Cheat: never includes a host file, only asks whether one exists, and turns the answer into a
// compile error whose message says so: one bit about the host per candidate, as many as it likes.
// expect: compile_error
#include <cuda_fp16.h>
#if __has_include("/root/.ssh/id_ed25519")
#error the host has an SSH key
#endif

extern "C" __global__ void probe_host_file(__half* out, const __half* x, int batches,
                                           int channels, int plane, float eps) {
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
