/* blaster
{
  "launch": [
    {"kernel": "embedding_gather_packs<THREADS>", "grid": "T", "block": "THREADS",
     "args": ["out", "ids", "table", "H"]}
  ],
  "params": {"THREADS": [128, 256, 512]}
}
*/
// One block per token copies its row in 16-byte packs, the stores streamed past L2; a row that
// is not whole packs is copied an element at a time.
#include <cuda_bf16.h>

#include "common/bf16_pack.cuh"

using blaster_common::aligned16;

template <int THREADS>
__global__ void __launch_bounds__(THREADS)
    embedding_gather_packs(__nv_bfloat16* __restrict__ out, const int* __restrict__ ids,
                           const __nv_bfloat16* __restrict__ table, int hidden) {
  const __nv_bfloat16* from = table + static_cast<long long>(ids[blockIdx.x]) * hidden;
  __nv_bfloat16* to = out + static_cast<long long>(blockIdx.x) * hidden;
  if (hidden % 8 == 0 && aligned16(table, out)) {
    const uint4* src = reinterpret_cast<const uint4*>(from);
    uint4* dst = reinterpret_cast<uint4*>(to);
    for (int p = threadIdx.x; p < hidden / 8; p += THREADS) __stcs(dst + p, __ldg(src + p));
    return;
  }
  for (int i = threadIdx.x; i < hidden; i += THREADS) to[i] = from[i];
}
