/* blaster
{
  "launch": [
    {"kernel": "logits_topk_naive", "grid": "T", "block": 256,
     "args": ["values", "ids", "logits", "V", "K"]}
  ]
}
*/
// The first version a newcomer writes: one block per row and k passes over it, each finding the
// best element after the last one found, in the order (value descending, id ascending).
#include <cuda_bf16.h>

namespace {

// Whether (va, a) comes before (vb, b): the higher value, or the lower id among equal values.
__device__ bool before(float va, int a, float vb, int b) { return va > vb || (va == vb && a < b); }

}  // namespace

extern "C" __global__ void logits_topk_naive(__nv_bfloat16* values, int* ids,
                                             const __nv_bfloat16* logits, int vocabulary, int k) {
  __shared__ float best_value[256];
  __shared__ int best_id[256];
  const __nv_bfloat16* row = logits + static_cast<long long>(blockIdx.x) * vocabulary;
  float last_value = __int_as_float(0x7f800000);  // +infinity: every element comes after it
  int last_id = -1;
  for (int j = 0; j < k; ++j) {
    float v = __int_as_float(0xff800000);
    int id = -1;
    for (int i = threadIdx.x; i < vocabulary; i += blockDim.x) {
      const float x = __bfloat162float(row[i]);
      if (before(last_value, last_id, x, i) && (id < 0 || before(x, i, v, id))) {
        v = x;
        id = i;
      }
    }
    best_value[threadIdx.x] = v;
    best_id[threadIdx.x] = id;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) {
        const int other = threadIdx.x + half;
        if (best_id[other] >= 0 &&
            (best_id[threadIdx.x] < 0 || before(best_value[other], best_id[other],
                                                best_value[threadIdx.x], best_id[threadIdx.x]))) {
          best_value[threadIdx.x] = best_value[other];
          best_id[threadIdx.x] = best_id[other];
        }
      }
      __syncthreads();
    }
    last_value = best_value[0];
    last_id = best_id[0];
    if (threadIdx.x == 0) {
      values[static_cast<long long>(blockIdx.x) * k + j] = __float2bfloat16(last_value);
      ids[static_cast<long long>(blockIdx.x) * k + j] = last_id;
    }
    __syncthreads();
  }
}
