/* blaster
{
  "launch": [
    {"kernel": "moe_route_warp_token<WARPS>", "grid": "ceil_div(T, WARPS)", "block": "WARPS * 32",
     "args": ["weights", "experts", "logits", "T", "E"]},
    {"kernel": "moe_group_warp_expert", "grid": 1, "block": "E * 32",
     "args": ["order", "offsets", "experts", "T", "E"]}
  ],
  "params": {"WARPS": [8]}
}
*/
// Style: a warp per row. The first kernel gives each token's row of logits a warp, a lane per
// expert: a butterfly of shuffles finds the maximum by (value, then the lower index), a total
// order, so every lane ends with the reference's first maximum; a second butterfly with that
// lane left out finds the second. The second kernel gives each expert a warp: it walks every
// slot twice in rounds of 32, ballots counting its slots, then, after the block has the counts
// and each warp has added those of the experts below its own, ballots ranking them, writing
// order in slot order. It reads experts, which the first kernel wrote in this same launch.
// Assumes E <= 32 (a lane, and then a warp, per expert); the task's E is 8.
#include <cuda_bf16.h>

namespace {

constexpr unsigned all_lanes = 0xffffffffu;

// The better of (value, index) pairs: a valid one over an invalid one, then the higher value,
// then the lower index. Valid indices differ, so this is a total order on valid pairs.
struct candidate {
  float value;
  int index;
  bool valid;
};

__device__ bool better(const candidate& a, const candidate& b) {
  if (a.valid != b.valid) return a.valid;
  return a.value > b.value || (a.value == b.value && a.index < b.index);
}

__device__ candidate warp_best(candidate c) {
#pragma unroll
  for (int mask = 16; mask > 0; mask /= 2) {
    const candidate other = {__shfl_xor_sync(all_lanes, c.value, mask),
                             __shfl_xor_sync(all_lanes, c.index, mask),
                             __shfl_xor_sync(all_lanes, static_cast<int>(c.valid), mask) != 0};
    if (better(other, c)) c = other;
  }
  return c;
}

}  // namespace

template <int WARPS>
__global__ void __launch_bounds__(WARPS * 32)
    moe_route_warp_token(float* __restrict__ weights, int* __restrict__ experts,
                         const __nv_bfloat16* __restrict__ logits, int tokens, int count) {
  const int lane = threadIdx.x % 32;
  const int t = blockIdx.x * WARPS + threadIdx.x / 32;
  if (t >= tokens) return;  // the same in all 32 lanes of the warp
  const bool expert = lane < count;
  const float v =
      expert ? __bfloat162float(logits[static_cast<long long>(t) * count + lane]) : 0.0f;
  const candidate first = warp_best({v, lane, expert});
  const candidate second = warp_best({v, lane, expert && lane != first.index});
  if (lane == 0) {
    const float ratio = expf(second.value - first.value);
    weights[2 * t] = 1.0f / (1.0f + ratio);
    weights[2 * t + 1] = ratio / (1.0f + ratio);
    experts[2 * t] = first.index;
    experts[2 * t + 1] = second.index;
  }
}

extern "C" __global__ void moe_group_warp_expert(int* __restrict__ order, int* __restrict__ offsets,
                                                 const int* __restrict__ experts, int tokens,
                                                 int count) {
  __shared__ int slots_of[32];
  const int lane = threadIdx.x % 32;
  const int e = threadIdx.x / 32;  // a warp per expert: the block has count warps
  const unsigned below = (1u << lane) - 1u;
  const int slots = 2 * tokens;

  int mine = 0;
#pragma unroll 4
  for (int s0 = 0; s0 < slots; s0 += 32) {
    const int s = s0 + lane;
    mine += __popc(__ballot_sync(all_lanes, s < slots && experts[s] == e));
  }
  if (lane == 0) slots_of[e] = mine;
  __syncthreads();
  int next = 0;
  for (int lower = 0; lower < e; ++lower) next += slots_of[lower];
  if (lane == 0) {
    offsets[e] = next;
    if (e == count - 1) offsets[count] = next + mine;
  }
#pragma unroll 4
  for (int s0 = 0; s0 < slots; s0 += 32) {
    const int s = s0 + lane;
    const bool hit = s < slots && experts[s] == e;
    const unsigned chose = __ballot_sync(all_lanes, hit);
    if (hit) order[next + __popc(chose & below)] = s;
    next += __popc(chose);
  }
}
