/* blaster
{
  "launch": [
    {"kernel": "embedding_gather_rows<THREADS>", "grid": "min(T, SMS * PER_SM)",
     "block": "THREADS", "args": ["out", "ids", "table", "T", "H"]}
  ],
  "params": {"SMS": [132], "PER_SM": [4], "THREADS": [256]}
}
*/
// Style: persistent grid. At most SMS*PER_SM blocks loop over the tokens: token t is copied by
// block t mod grid, for every t below T, which the loop reads from the arguments on every
// launch, so a grid smaller than the output leaves no token out. A row moves in 8-byte words
// of four bf16 where every row starts on one (H a multiple of 4, the table and out 8-byte
// aligned, checked at run time); any other H one element at a time.
#include <cuda_bf16.h>

template <int THREADS>
__global__ void __launch_bounds__(THREADS)
    embedding_gather_rows(__nv_bfloat16* __restrict__ out, const int* __restrict__ ids,
                          const __nv_bfloat16* __restrict__ table, int tokens, int hidden) {
  const bool words =
      hidden % 4 == 0 &&
      ((reinterpret_cast<unsigned long long>(table) | reinterpret_cast<unsigned long long>(out)) %
       8) == 0;
  for (int t = blockIdx.x; t < tokens; t += gridDim.x) {
    const __nv_bfloat16* from = table + static_cast<long long>(ids[t]) * hidden;
    __nv_bfloat16* to = out + static_cast<long long>(t) * hidden;
    if (words) {
      const uint2* src = reinterpret_cast<const uint2*>(from);
      uint2* dst = reinterpret_cast<uint2*>(to);
      for (int q = threadIdx.x; q < hidden / 4; q += THREADS) dst[q] = __ldg(src + q);
    } else {
      for (int j = threadIdx.x; j < hidden; j += THREADS) to[j] = from[j];
    }
  }
}
