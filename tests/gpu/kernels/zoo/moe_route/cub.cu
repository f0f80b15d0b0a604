/* blaster
{
  "launch": [
    {"kernel": "moe_route_block_scan<THREADS>", "grid": 1, "block": "THREADS",
     "args": ["weights", "experts", "order", "offsets", "logits", "T", "E"]}
  ],
  "params": {"THREADS": [1024]}
}
*/
// Style: CUB. One block does it all, in rounds of THREADS tokens: first it routes every token (a
// thread each, the reference's scan) and counts each expert's slots (__syncthreads_count, an
// exact integer count); thread 0 turns the counts into offsets; then, round by round, a
// cub::BlockScan exclusive sum per expert ranks the round's slots of that expert in thread
// order, which is token order, and the scan's total moves the expert's next position on. In the
// second pass each thread reads back the experts it wrote itself in the first, in this launch.
// Integer scans only, no atomics: the order is the same on every run. Assumes E <= 32; the
// task's E is 8.
#include <cub/block/block_scan.cuh>
#include <cuda_bf16.h>

namespace {

// The reference's choice: the first maximum, then the first maximum of the others.
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

template <int THREADS>
__global__ void __launch_bounds__(THREADS)
    moe_route_block_scan(float* __restrict__ weights, int* __restrict__ experts,
                         int* __restrict__ order, int* __restrict__ offsets,
                         const __nv_bfloat16* __restrict__ logits, int tokens, int count) {
  using scan = cub::BlockScan<int, THREADS>;
  __shared__ typename scan::TempStorage storage;
  __shared__ int next[32];  // per expert: its slots, then where its next slot goes
  if (threadIdx.x < 32) next[threadIdx.x] = 0;
  __syncthreads();

  for (int base = 0; base < tokens; base += THREADS) {
    const int t = base + static_cast<int>(threadIdx.x);
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
      if (threadIdx.x == 0) next[e] += slots;
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    int run = 0;
    for (int e = 0; e < count; ++e) {
      const int slots = next[e];
      next[e] = run;
      offsets[e] = run;
      run += slots;
    }
    offsets[count] = run;
  }
  __syncthreads();

  for (int base = 0; base < tokens; base += THREADS) {
    const int t = base + static_cast<int>(threadIdx.x);
    int first = -1;
    int second = -1;
    if (t < tokens) {  // this thread's own stores of the first pass
      first = experts[2 * t];
      second = experts[2 * t + 1];
    }
    for (int e = 0; e < count; ++e) {
      const int mine = first == e || second == e ? 1 : 0;
      int rank;
      int round_slots;
      scan(storage).ExclusiveSum(mine, rank, round_slots);
      if (mine) order[next[e] + rank] = 2 * t + (first == e ? 0 : 1);
      __syncthreads();  // every thread has read next[e], and the scan's storage is free again
      if (threadIdx.x == 0) next[e] += round_slots;
    }
    __syncthreads();  // the round's last update of next is seen by the next round
  }
}
