/* blaster
{
  "launch": [
    {"kernel": "rmsnorm_heap_workspace", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// A correct rmsnorm whose first thread takes a block of the device heap and gives it back: what it
// wrote there outlives its module, so a kept worker must not hand its context to the next
// evaluation.
#include <cuda_fp16.h>

extern "C" __global__ void rmsnorm_heap_workspace(__half* out, const __half* x, int batches,
                                                  int channels, int plane, float eps) {
  const long long position = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (position == 0) {
    auto* workspace = static_cast<unsigned*>(malloc(sizeof(unsigned)));
    if (workspace != nullptr) *workspace = 0x600DF00Du;
    free(workspace);
  }
  if (position >= static_cast<long long>(batches) * plane) return;
  const __half* in = x + (position / plane) * channels * plane + position % plane;
  __half* to = out + (position / plane) * channels * plane + position % plane;
  float sum_squares = 0.0f;
  for (int c = 0; c < channels; ++c) {
    const float v = __half2float(in[static_cast<long long>(c) * plane]);
    sum_squares += v * v;
  }
  const float scale = rsqrtf(sum_squares / channels + eps);
  for (int c = 0; c < channels; ++c) {
    const long long i = static_cast<long long>(c) * plane;
    to[i] = __float2half(__half2float(in[i]) * scale);
  }
}
