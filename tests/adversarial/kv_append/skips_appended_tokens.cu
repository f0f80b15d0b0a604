/* blaster
{
  "launch": [
    {"kernel": "skips_appended_tokens", "grid": ["ceil_div(KH * D, 256)", "T"], "block": 256,
     "args": ["k_cache", "v_cache", "key", "value", "slot_mapping", "KH * D"]}
  ]
}
*/
// Cheat: a block whose first eight key elements are already in the token's slot counts its part
// as appended and returns. It looks before any of its threads writes and no other block writes
// there, so every checked launch, which meets the cache as it was drawn, copies in full; back-to-
// back timed launches find their rows in place and move eight elements a block.
// expect: stale_in_timing|impossible_speed
#include <cuda_bf16.h>

extern "C" __global__ void skips_appended_tokens(__nv_bfloat16* k_cache, __nv_bfloat16* v_cache,
                                                 const __nv_bfloat16* key,
                                                 const __nv_bfloat16* value,
                                                 const int* slot_mapping, int row) {
  __shared__ bool appended;
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const long long from = static_cast<long long>(blockIdx.y) * row;
  const long long to = static_cast<long long>(slot_mapping[blockIdx.y]) * row;
  if (threadIdx.x == 0) {
    // Eight elements alike, not one: a drawn value that happens to equal a new one must not
    // make the block skip where the gate looks.
    const int part = static_cast<int>(blockIdx.x * blockDim.x);
    appended = true;
    for (int j = part; j < part + 8 && j < row; ++j) {
      appended &= __bfloat16_as_ushort(k_cache[to + j]) == __bfloat16_as_ushort(key[from + j]);
    }
  }
  __syncthreads();
  if (appended || i >= row) return;
  k_cache[to + i] = key[from + i];
  v_cache[to + i] = value[from + i];
}
