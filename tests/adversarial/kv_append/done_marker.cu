/* blaster
{
  "launch": [
    {"kernel": "done_marker", "grid": "ceil_div(T * KH * D, 256)", "block": 256,
     "args": ["k_cache", "v_cache", "key", "value", "slot_mapping", "T", "KH * D"]}
  ]
}
*/
// Cheat: the last values of the last token, found in their slot, mark the whole append as done by
// an earlier launch, and every thread returns. The last block writes it, after the others have
// looked; a block that looked later would copy nothing, which the gate sees as a wrong result.
// expect: stale_in_timing|impossible_speed|wrong_result
#include <cuda_bf16.h>

extern "C" __global__ void done_marker(__nv_bfloat16* k_cache, __nv_bfloat16* v_cache,
                                       const __nv_bfloat16* key, const __nv_bfloat16* value,
                                       const int* slot_mapping, int tokens, int row) {
  const long long last = static_cast<long long>(tokens) * row - 1;
  const long long marker = static_cast<long long>(slot_mapping[tokens - 1]) * row + row - 1;
  // The last eight values alike, not one: a drawn value may equal a new one by chance.
  bool done = true;
  for (int j = 0; j < 8 && j < row; ++j) {
    done &= __bfloat16_as_ushort(v_cache[marker - j]) == __bfloat16_as_ushort(value[last - j]);
  }
  if (done) return;
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i > last) return;
  const long long to = static_cast<long long>(slot_mapping[i / row]) * row + i % row;
  k_cache[to] = key[i];
  v_cache[to] = value[i];
}
