/* blaster
{
  "launch": [
    {"kernel": "moe_route_ballot<THREADS, CLUSTER>", "grid": "CLUSTER", "block": "THREADS",
     "args": ["weights", "experts", "order", "offsets", "logits", "T", "E"]}
  ],
  "cluster": ["CLUSTER", 1, 1],
  "params": {"THREADS": [1024, 256, 32], "CLUSTER": [8, 4, 1]}
}
*/
// One launch does the routing and the grouping. Every warp owns a contiguous run of tokens, a
// token per lane, so the order of (block, warp, round, lane) is token order: a warp's rank of a
// token among those of one expert is a ballot's population below its lane, the warps' counts
// are scanned in shared memory, and the CLUSTER blocks (one cluster, one token range each)
// trade their per-expert totals through distributed shared memory. No serial walk, no atomics:
// the order within an expert is the reference's ascending token order by construction. One
// warp and no cluster is the shortest chain for one token; a cluster of 1024-thread blocks gives
// a long prefill a token per thread. Assumes E <= 32 (a lane per expert); the task's E is 8.
#include <cuda_bf16.h>

#include "common/bf16_pack.cuh"
#include "common/cluster.cuh"

using blaster_common::aligned16;
using blaster_common::bf16x8;

namespace {

constexpr unsigned all_lanes = 0xffffffffu;
constexpr int held_rounds = 8;  // rounds whose experts a thread keeps in shared memory
constexpr int nobody = 255;     // the expert of an idle lane: matches no expert

// The two experts of a row of logits, packed as first | second << 8, and their weights, as the
// reference picks them: the first maximum, then the first maximum of the others.
template <typename Logit>
__device__ __forceinline__ int top2(Logit logit, int count, float2& weight) {
  int first = 0;
  float best = logit(0);
  for (int e = 1; e < count; ++e) {
    const float v = logit(e);
    if (v > best) {
      best = v;
      first = e;
    }
  }
  int second = first == 0 ? 1 : 0;
  float next = first == 0 ? logit(1) : logit(0);
  for (int e = 0; e < count; ++e) {
    const float v = logit(e);
    if (e != first && v > next) {
      next = v;
      second = e;
    }
  }
  const float ratio = expf(next - best);
  weight = make_float2(1.0f / (1.0f + ratio), ratio / (1.0f + ratio));
  return first | second << 8;
}

__device__ __forceinline__ unsigned lanes_below() {
  unsigned mask;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(mask));
  return mask;
}

}  // namespace

// At most 8 blocks in all, one per SM: registers are free, so none spill.
template <int THREADS, int CLUSTER>
__global__ void __launch_bounds__(THREADS, 1)
    moe_route_ballot(float* __restrict__ weights, int* experts, int* __restrict__ order,
                     int* __restrict__ offsets, const __nv_bfloat16* __restrict__ logits,
                     int tokens, int count) {
  static_assert(THREADS % 32 == 0 && THREADS <= 1024, "THREADS is a whole number of warps");
  constexpr int WARPS = THREADS / 32;
  __shared__ int start[WARPS][32];  // per warp and expert: its count, then where it writes
  __shared__ int block_total[32];   // per expert, this block's slots
  // Each thread's first rounds' experts, first | second << 8, kept for the scatter.
  __shared__ unsigned short held[held_rounds][THREADS];

  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  // Contiguous runs of whole rounds in token order: block, then warp.
  const int per_warp = (tokens + CLUSTER * WARPS * 32 - 1) / (CLUSTER * WARPS * 32) * 32;
  const int begin = (blockIdx.x * WARPS + warp) * per_warp;
  const int end = min(begin + per_warp, tokens);
  const int rounds = begin < end ? (end - begin + 31) / 32 : 0;  // the same in the whole warp
  const bool packed = count == 8 && aligned16(logits, logits);

  // Routes round r's token of this lane; returns its experts, or nobody's for an idle lane.
  auto route = [&](int r) {
    const int t = begin + r * 32 + lane;
    if (t >= end) return nobody | nobody << 8;
    const __nv_bfloat16* row = logits + static_cast<long long>(t) * count;
    float2 w;
    int pair;
    if (packed) {
      bf16x8 u;
      u.v = __ldg(reinterpret_cast<const uint4*>(row));  // the token's 8 logits in one load
      float v[8];
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const float2 f = __bfloat1622float2(u.h2[k]);
        v[2 * k] = f.x;
        v[2 * k + 1] = f.y;
      }
      pair = top2([&](int e) { return v[e]; }, 8, w);
    } else {
      pair = top2([&](int e) { return __bfloat162float(row[e]); }, count, w);
    }
    reinterpret_cast<float2*>(weights)[t] = w;
    reinterpret_cast<int2*>(experts)[t] = make_int2(pair & 0xff, pair >> 8);
    return pair;
  };
  // Lane e counts the slots of expert e among a round's 32 tokens.
  int mine = 0;
  auto tally = [&](int pair) {
    for (int e = 0; e < count; ++e) {
      const unsigned chose = __ballot_sync(all_lanes, (pair & 0xff) == e || (pair >> 8) == e);
      if (lane == e) mine += __popc(chose);
    }
  };

  for (int r = 0; r < rounds; ++r) {
    const int pair = route(r);
    if (r < held_rounds) held[r][threadIdx.x] = static_cast<unsigned short>(pair);
    tally(pair);
  }
  start[warp][lane] = mine;
  __syncthreads();

  // Warp 0: the warps' exclusive prefix per expert, the block's total, then the cluster's.
  if (warp == 0) {
    int run = 0;
    for (int w = 0; w < WARPS; ++w) {
      const int c = start[w][lane];
      start[w][lane] = run;
      run += c;
    }
    block_total[lane] = run;
  }
  int before = 0;  // expert lane's slots in blocks before this one
  int total = 0;   // expert lane's slots in all
  if constexpr (CLUSTER > 1) {
    blaster_common::cluster_arrive();  // block_total is written
    blaster_common::cluster_wait();
    if (warp == 0) {
      const unsigned rank = blaster_common::cluster_rank();
      for (unsigned b = 0; b < CLUSTER; ++b) {
        const int c = __float_as_int(blaster_common::load_remote_float(
            reinterpret_cast<const float*>(&block_total[lane]), b));
        total += c;
        if (b < rank) before += c;
      }
    }
    blaster_common::cluster_arrive();  // done reading the others' shared memory
  } else {
    if (warp == 0) total = block_total[lane];
  }
  if (warp == 0) {
    int inclusive = total;  // experts lane's slots and those of lower experts
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
      const int lower = __shfl_up_sync(all_lanes, inclusive, d);
      if (lane >= d) inclusive += lower;
    }
    const int first_slot = inclusive - total;  // offsets[lane]
    if (blockIdx.x == 0) {
      if (lane < count) offsets[lane] = first_slot;
      if (lane == 0) offsets[count] = 2 * tokens;  // every token has two slots
    }
    for (int w = 0; w < WARPS; ++w) start[w][lane] += first_slot + before;
  }
  __syncthreads();

  // Lane e holds where this warp's next slot of expert e goes.
  int next = start[warp][lane];
  auto scatter = [&](int r, int pair) {
    const int one = pair & 0xff;
    const int two = pair >> 8;
    int at_one = 0;
    int at_two = 0;
    for (int e = 0; e < count; ++e) {
      const unsigned chose = __ballot_sync(all_lanes, one == e || two == e);
      const int base = __shfl_sync(all_lanes, next, e) + __popc(chose & lanes_below());
      if (one == e) at_one = base;
      if (two == e) at_two = base;
      if (lane == e) next += __popc(chose);
    }
    const int t = begin + r * 32 + lane;
    if (t < end) {
      order[at_one] = 2 * t;
      order[at_two] = 2 * t + 1;
    }
  };
  for (int r = 0; r < rounds; ++r) {
    if (r < held_rounds) {
      scatter(r, held[r][threadIdx.x]);
    } else {
      const int t = begin + r * 32 + lane;
      // This thread wrote experts[t] above.
      const int2 pair =
          t < end ? reinterpret_cast<const int2*>(experts)[t] : make_int2(nobody, nobody);
      scatter(r, pair.x | pair.y << 8);
    }
  }
  if constexpr (CLUSTER > 1) blaster_common::cluster_wait();  // no block leaves while read
}
