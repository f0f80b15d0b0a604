/* blaster
{
  "launch": [
    {"kernel": "moe_route_tokens", "grid": "ceil_div(T, 256)", "block": 256,
     "args": ["weights", "experts", "counts", "logits", "T", "E"]},
    {"kernel": "moe_expert_bases", "grid": 1, "block": 32,
     "args": ["offsets", "counts", "ceil_div(T, 256)", "E"]},
    {"kernel": "moe_scatter_slots", "grid": "ceil_div(T, 256)", "block": 256,
     "args": ["order", "experts", "counts", "T", "E"]}
  ],
  "scratch": {"counts": "ceil_div(T, 256) * E * 4"}
}
*/
// Style: a split reduction with a second pass. The first kernel routes a token per thread (the
// reference's scan: the first maximum, then the first maximum of the others) and writes each
// block's per-expert slot count to the declared scratch (__syncthreads_count: an integer count,
// exact, whatever order the block's threads arrive in); the second, one warp, a lane per
// expert, adds the blocks' counts for each expert, scans the totals into offsets and turns
// each block's count, in place, into where its slots of that expert begin; the third ranks each
// block's slots by ballots (warp, then lane: token order) and writes order. Every scratch entry
// is written by the first kernel of the same launch before the second reads it. Assumes
// E <= 32 (a lane per expert); the task's E is 8.
#include <cuda_bf16.h>

namespace {

constexpr unsigned all_lanes = 0xffffffffu;

// The reference's choice: the first maximum, then the first maximum of the others; their
// probabilities over the two's sum, from p_second / p_first = exp(l_second - l_first).
__device__ void route(const __nv_bfloat16* row, int count, int& first, int& second,
                      float2& weight) {
  first = 0;
  float best = __bfloat162float(row[0]);
  for (int e = 1; e < count; ++e) {
    const float v = __bfloat162float(row[e]);
    if (v > best) {
      best = v;
      first = e;
    }
  }
  second = first == 0 ? 1 : 0;
  float next = __bfloat162float(row[second]);
  for (int e = 0; e < count; ++e) {
    const float v = __bfloat162float(row[e]);
    if (e != first && v > next) {
      next = v;
      second = e;
    }
  }
  const float ratio = expf(next - best);
  weight = make_float2(1.0f / (1.0f + ratio), ratio / (1.0f + ratio));
}

}  // namespace

extern "C" __global__ void __launch_bounds__(256)
    moe_route_tokens(float* __restrict__ weights, int* __restrict__ experts,
                     int* __restrict__ counts, const __nv_bfloat16* __restrict__ logits,
                     int tokens, int count) {
  const int t = blockIdx.x * 256 + threadIdx.x;
  int first = -1;  // none: a thread past the last token chooses no expert
  int second = -1;
  if (t < tokens) {
    float2 w;
    route(logits + static_cast<long long>(t) * count, count, first, second, w);
    weights[2 * t] = w.x;
    weights[2 * t + 1] = w.y;
    experts[2 * t] = first;
    experts[2 * t + 1] = second;
  }
  for (int e = 0; e < count; ++e) {
    const int slots = __syncthreads_count(first == e || second == e);
    if (threadIdx.x == 0) counts[blockIdx.x * count + e] = slots;
  }
}

extern "C" __global__ void moe_expert_bases(int* __restrict__ offsets, int* __restrict__ counts,
                                            int blocks, int count) {
  const int e = threadIdx.x;  // a lane per expert
  int total = 0;
  if (e < count) {
    for (int b = 0; b < blocks; ++b) total += counts[b * count + e];
  }
  int inclusive = total;  // this expert's slots and those of the experts below it
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const int lower = __shfl_up_sync(all_lanes, inclusive, d);
    if (e >= d) inclusive += lower;
  }
  const int first_slot = inclusive - total;
  if (e < count) offsets[e] = first_slot;
  if (e == count - 1) offsets[count] = inclusive;  // 2T: every token has two slots
  if (e < count) {
    int run = first_slot;
    for (int b = 0; b < blocks; ++b) {
      const int c = counts[b * count + e];
      counts[b * count + e] = run;
      run += c;
    }
  }
}

extern "C" __global__ void __launch_bounds__(256)
    moe_scatter_slots(int* __restrict__ order, const int* __restrict__ experts,
                      const int* __restrict__ bases, int tokens, int count) {
  __shared__ int warp_slots[8][32];  // per warp and expert
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const unsigned below = (1u << lane) - 1u;
  const int t = blockIdx.x * 256 + threadIdx.x;
  int first = -1;
  int second = -1;
  if (t < tokens) {
    first = experts[2 * t];
    second = experts[2 * t + 1];
  }
  for (int e = 0; e < count; ++e) {
    const unsigned chose = __ballot_sync(all_lanes, first == e || second == e);
    if (lane == 0) warp_slots[warp][e] = __popc(chose);
  }
  __syncthreads();
  for (int e = 0; e < count; ++e) {
    const unsigned chose = __ballot_sync(all_lanes, first == e || second == e);
    if (first == e || second == e) {
      int at = bases[blockIdx.x * count + e] + __popc(chose & below);
      for (int w = 0; w < warp; ++w) at += warp_slots[w][e];
      order[at] = 2 * t + (first == e ? 0 : 1);
    }
  }
}
