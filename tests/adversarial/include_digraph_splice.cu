/* blaster
{
  "launch": [
    {"kernel": "include_digraph_splice", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Cheat: the directive is spelled so that no line starts with "#include": the %: digraph
// stands for the #, a comment sits between it and the name, and a line splice cuts the name in
// two. The preprocessor reads it as #include "/etc/passwd" all the same.
// expect: compile_error
#include <cuda_fp16.h>
  %:/* nothing to see */inc\
lude "/etc/passwd"

extern "C" __global__ void include_digraph_splice(__half* out, const __half* x, int batches,
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
