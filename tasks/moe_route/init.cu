/* blaster
{
  "launch": [
    {"kernel": "moe_topk_naive", "grid": "ceil_div(T, 128)", "block": 128,
     "args": ["weights", "experts", "logits", "T", "E"]},
    {"kernel": "moe_group_naive", "grid": 1, "block": 32,
     "args": ["order", "offsets", "experts", "T", "E"]}
  ]
}
*/
// The first version a newcomer writes: one thread per token picks its two experts; then one
// thread per expert counts its slots, the first thread turns the counts into offsets, and each
// expert's thread walks every slot again to write its own in token order.
#include <cuda_bf16.h>

extern "C" __global__ void moe_topk_naive(float* weights, int* experts, const __nv_bfloat16* logits,
                                          int tokens, int count) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= tokens) return;
  const __nv_bfloat16* row = logits + static_cast<long long>(t) * count;
  int first = 0;
  for (int e = 1; e < count; ++e) {
    if (__bfloat162float(row[e]) > __bfloat162float(row[first])) first = e;
  }
  int second = first == 0 ? 1 : 0;
  for (int e = 0; e < count; ++e) {
    if (e != first && __bfloat162float(row[e]) > __bfloat162float(row[second])) second = e;
  }
  const float ratio = expf(__bfloat162float(row[second]) - __bfloat162float(row[first]));
  weights[2 * t] = 1.0f / (1.0f + ratio);
  weights[2 * t + 1] = ratio / (1.0f + ratio);
  experts[2 * t] = first;
  experts[2 * t + 1] = second;
}

extern "C" __global__ void moe_group_naive(int* order, int* offsets, const int* experts, int tokens,
                                           int count) {
  __shared__ int start[33];
  const int e = threadIdx.x;
  int mine = 0;
  if (e < count) {
    for (int s = 0; s < 2 * tokens; ++s) mine += experts[s] == e;
  }
  start[e + 1] = mine;
  __syncthreads();
  if (e == 0) {
    start[0] = 0;
    for (int i = 1; i <= count; ++i) start[i] += start[i - 1];
    for (int i = 0; i <= count; ++i) offsets[i] = start[i];
  }
  __syncthreads();
  if (e < count) {
    int next = start[e];
    for (int s = 0; s < 2 * tokens; ++s) {
      if (experts[s] == e) order[next++] = s;
    }
  }
}
