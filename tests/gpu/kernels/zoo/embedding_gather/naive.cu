/* blaster
{
  "launch": [
    {"kernel": "embedding_gather_element", "grid": "ceil_div(T*H, 256)", "block": 256,
     "args": ["out", "ids", "table", "T*H", "H"]}
  ]
}
*/
// Style: naive. One thread per output element: element i is column i % H of token i / H, read
// from the table's row ids[token]. Any H, any alignment: every access is one element.
#include <cuda_bf16.h>

extern "C" __global__ void embedding_gather_element(__nv_bfloat16* out, const int* ids,
                                                    const __nv_bfloat16* table, int n,
                                                    int hidden) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const long long token = i / hidden;
  const long long column = i - token * hidden;
  out[i] = table[static_cast<long long>(ids[token]) * hidden + column];
}
