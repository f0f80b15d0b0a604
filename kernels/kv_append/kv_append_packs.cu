/* blaster
{
  "launch": [
    {"kernel": "kv_append_packs<THREADS, VEC>", "grid": ["ceil_div(ceil_div(KH * D, VEC), THREADS)", "T"],
     "block": "THREADS",
     "args": ["k_cache", "v_cache", "key", "value", "slot_mapping", "KH * D"]}
  ],
  "params": {"THREADS": [128, 256, 64], "VEC": [8, 4]}
}
*/
// A block row per token (blockIdx.y), each thread moving VEC elements of its keys and of its
// values in one access each: 16 bytes at VEC = 8, the widest a thread can store. The slot is
// read once per thread and the copies go out with streaming stores, since no later launch reads
// the new rows soon. Rows that are not whole packs, or buffers not aligned to them, move one
// element at a time.
#include <cuda_bf16.h>

#include "common/bf16_pack.cuh"

using blaster_common::aligned_to;

template <int THREADS, int VEC>
__global__ void __launch_bounds__(THREADS)
    kv_append_packs(__nv_bfloat16* __restrict__ k_cache, __nv_bfloat16* __restrict__ v_cache,
                    const __nv_bfloat16* __restrict__ key, const __nv_bfloat16* __restrict__ value,
                    const int* __restrict__ slot_mapping, int row) {
  using pack = typename blaster_common::bf16_word<VEC>::type;
  const int first = (static_cast<int>(blockIdx.x) * THREADS + static_cast<int>(threadIdx.x)) * VEC;
  if (first >= row) return;
  const long long from = static_cast<long long>(blockIdx.y) * row + first;
  const long long to = static_cast<long long>(__ldg(slot_mapping + blockIdx.y)) * row + first;
  if (row % VEC == 0 && aligned_to<2 * VEC>(k_cache, v_cache, key, value)) {
    const pack k = __ldcs(reinterpret_cast<const pack*>(key + from));
    const pack v = __ldcs(reinterpret_cast<const pack*>(value + from));
    __stcs(reinterpret_cast<pack*>(k_cache + to), k);
    __stcs(reinterpret_cast<pack*>(v_cache + to), v);
    return;
  }
  for (int j = 0; j < VEC && first + j < row; ++j) {
    k_cache[to + j] = key[from + j];
    v_cache[to + j] = value[from + j];
  }
}
