/* blaster
{
  "launch": [
    {"kernel": "skips_appended_tokens", "grid": ["ceil_div(KH * D, 256)", "T"], "block": 256,
     "args": ["k_cache", "v_cache", "key", "value", "slot_mapping", "KH * D"]}
  ]
}
*/
// Cheat: a token whose first key element is already in its slot counts as appended, and its
// block returns. Every checked launch meets the cache as it was drawn and copies; back-to-back
// timed launches find their rows in place and move two elements a block.
// expect: stale_in_timing|impossible_speed
#include <cuda_bf16.h>

extern "C" __global__ void skips_appended_tokens(__nv_bfloat16* k_cache, __nv_bfloat16* v_cache,
                                                 const __nv_bfloat16* key,
                                                 const __nv_bfloat16* value,
                                                 const int* slot_mapping, int row) {
  const long long from = static_cast<long long>(blockIdx.y) * row;
  const long long to = static_cast<long long>(slot_mapping[blockIdx.y]) * row;
  if (__bfloat16_as_ushort(k_cache[to]) == __bfloat16_as_ushort(key[from])) return;
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= row) return;
  k_cache[to + i] = key[from + i];
  v_cache[to + i] = value[from + i];
}
