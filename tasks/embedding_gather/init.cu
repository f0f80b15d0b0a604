/* blaster
{
  "launch": [
    {"kernel": "embedding_gather_naive", "grid": "T", "block": 256,
     "args": ["out", "ids", "table", "H"]}
  ]
}
*/
// The first version a newcomer writes: one block per token copies its row, an element per thread.
#include <cuda_bf16.h>

extern "C" __global__ void embedding_gather_naive(__nv_bfloat16* out, const int* ids,
                                                  const __nv_bfloat16* table, int hidden) {
  const long long row = static_cast<long long>(ids[blockIdx.x]) * hidden;
  const long long to = static_cast<long long>(blockIdx.x) * hidden;
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) out[to + j] = table[row + j];
}
