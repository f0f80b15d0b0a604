/* blaster
{
  "launch": [
    {"kernel": "stale_output", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
// Cheat: writes nothing, hoping the output buffer still holds an earlier correct answer (a
// harness that reuses the reference's output buffer would pass it).
// expect: unwritten_output
#include <cuda_fp16.h>

extern "C" __global__ void stale_output(__half* out, const __half* x, int batches, int channels,
                                        int plane, float eps) {}
