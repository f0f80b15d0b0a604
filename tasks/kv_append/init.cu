/* blaster
{
  "launch": [
    {"kernel": "kv_append_naive", "grid": "ceil_div(T * KH * D, 256)", "block": 256,
     "args": ["k_cache", "v_cache", "key", "value", "slot_mapping", "T", "KH * D"]}
  ]
}
*/
// The first version a newcomer writes: a thread per element of the new keys, two bf16 copies.
#include <cuda_bf16.h>

extern "C" __global__ void kv_append_naive(__nv_bfloat16* k_cache, __nv_bfloat16* v_cache,
                                           const __nv_bfloat16* key, const __nv_bfloat16* value,
                                           const int* slot_mapping, int tokens, int row) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<long long>(tokens) * row) return;
  const long long t = i / row;
  const long long to = static_cast<long long>(slot_mapping[t]) * row + i % row;
  k_cache[to] = key[i];
  v_cache[to] = value[i];
}
