/* blaster
{
  "launch": [
    {"kernel": "shared_beyond_device", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "shared_bytes": 200000, "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ],
  "max_dynamic_shared_bytes": 200000
}
*/
// Broken: 200000 bytes of dynamic shared memory on top of 48 KiB of static: each within what a
// plan may ask for alone, together more than any Hopper block gets. The device's own limit
// refuses the plan before anything is launched.
// expect: plan_error
#include <cuda_fp16.h>

extern "C" __global__ void shared_beyond_device(__half* out, const __half* x, int batches,
                                                int channels, int plane, float eps) {
  __shared__ float staged[12 * 1024];  // 48 KiB
  extern __shared__ float dynamic[];
  const long long position = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  staged[threadIdx.x] = static_cast<float>(position);
  dynamic[threadIdx.x] = staged[(threadIdx.x + 1) % blockDim.x];
  if (position >= static_cast<long long>(batches) * plane) return;
  out[position] = __float2half(dynamic[threadIdx.x] * eps);
}
