/* blaster
{
  "launch": [
    {"kernel": "embedding_gather_warp_row<WARPS>", "grid": "ceil_div(T, WARPS)",
     "block": "WARPS * 32", "args": ["out", "ids", "table", "T", "H"]}
  ],
  "params": {"WARPS": [8]}
}
*/
// Style: a warp per row. Each warp copies one token's row, its lanes a bf16 pair (one 4-byte
// word) at a time where every row starts on a word: H even and the table and out 4-byte
// aligned, checked at run time; any other H one element at a time. A token past T leaves its
// warp idle.
#include <cuda_bf16.h>

template <int WARPS>
__global__ void __launch_bounds__(WARPS * 32)
    embedding_gather_warp_row(__nv_bfloat16* __restrict__ out, const int* __restrict__ ids,
                              const __nv_bfloat16* __restrict__ table, int tokens, int hidden) {
  const int lane = threadIdx.x % 32;
  const int token = blockIdx.x * WARPS + threadIdx.x / 32;
  if (token >= tokens) return;
  const __nv_bfloat16* from = table + static_cast<long long>(ids[token]) * hidden;
  __nv_bfloat16* to = out + static_cast<long long>(token) * hidden;
  const bool pairs =
      hidden % 2 == 0 &&
      ((reinterpret_cast<unsigned long long>(table) | reinterpret_cast<unsigned long long>(out)) %
       4) == 0;
  if (pairs) {
    const unsigned* src = reinterpret_cast<const unsigned*>(from);
    unsigned* dst = reinterpret_cast<unsigned*>(to);
    for (int q = lane; q < hidden / 2; q += 32) dst[q] = __ldg(src + q);
  } else {
    for (int j = lane; j < hidden; j += 32) to[j] = from[j];
  }
}
