/* blaster
{
  "launch": [
    {"kernel": "fused_moe_naive", "grid": ["ceil_div(2*N, 32)", "E"], "block": 256,
     "args": ["C", "A", "W", "topk_ids", "M*TOPK", "TOPK", "2*N", "K"]}
  ]
}
*/
// The first version a newcomer writes, with no sorting and no tensor cores: a block per expert
// and 32 of its weight rows, 4 rows per warp. The block walks every slot (token m's j-th expert
// is slot m * TOPK + j), keeps those routed to its expert, and for each group of up to 8 of them
// each warp takes the dot products of its 4 rows with the 8 tokens, its lanes striding over K,
// in fp32; each of a warp's 32 sums is then reduced by shuffles and stored by one lane. Every
// token's row of A is read once per block that serves it, and every weight row once per group
// of 8 tokens: from the L2, and far from the tensor cores' rate, but simple to prove right.
#include <cuda_bf16.h>

namespace {

constexpr int warps = 8;
constexpr int threads = warps * 32;
constexpr int rows_per_warp = 4;
constexpr int group = 8;  // tokens per pass: rows_per_warp * group = 32 sums, one per lane

}  // namespace

extern "C" __global__ void __launch_bounds__(threads)
    fused_moe_naive(__nv_bfloat16* C, const __nv_bfloat16* A, const __nv_bfloat16* W,
                    const int* topk_ids, int slots, int topk, int rows, int depth) {
  __shared__ int routed[threads];  // the slots of this chunk routed to the block's expert
  __shared__ int warp_hits[warps];
  const int expert = blockIdx.y;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int row0 = blockIdx.x * (warps * rows_per_warp) + warp * rows_per_warp;
  const __nv_bfloat16* w = W + static_cast<long long>(expert) * rows * depth;
  // A warp past the last row computes on the last row and stores nothing.
  const __nv_bfloat16* w_rows[rows_per_warp];
#pragma unroll
  for (int r = 0; r < rows_per_warp; ++r) {
    w_rows[r] = w + static_cast<long long>(min(row0 + r, rows - 1)) * depth;
  }

  for (int first = 0; first < slots; first += threads) {
    // This chunk's slots of the expert, in order: each warp counts its own by a ballot.
    const int slot = first + static_cast<int>(threadIdx.x);
    const bool mine = slot < slots && topk_ids[slot] == expert;
    const unsigned ballot = __ballot_sync(0xffffffffu, mine);
    if (lane == 0) warp_hits[warp] = __popc(ballot);
    __syncthreads();
    int before = 0;
    int hits = 0;
#pragma unroll
    for (int i = 0; i < warps; ++i) {
      if (i < warp) before += warp_hits[i];
      hits += warp_hits[i];
    }
    if (mine) routed[before + __popc(ballot & ((1u << lane) - 1u))] = slot;
    __syncthreads();

    for (int g = 0; g < hits; g += group) {
      // A short group repeats its last token and stores only its own.
      const int count = min(group, hits - g);
      const __nv_bfloat16* a_rows[group];
#pragma unroll
      for (int t = 0; t < group; ++t) {
        a_rows[t] = A + static_cast<long long>(routed[g + min(t, count - 1)] / topk) * depth;
      }
      float sums[rows_per_warp][group] = {};
      for (int k = lane; k < depth; k += 32) {
        float a[group];
#pragma unroll
        for (int t = 0; t < group; ++t) a[t] = __bfloat162float(a_rows[t][k]);
#pragma unroll
        for (int r = 0; r < rows_per_warp; ++r) {
          const float wk = __bfloat162float(w_rows[r][k]);
#pragma unroll
          for (int t = 0; t < group; ++t) sums[r][t] += wk * a[t];
        }
      }
#pragma unroll
      for (int r = 0; r < rows_per_warp; ++r) {
#pragma unroll
        for (int t = 0; t < group; ++t) {
#pragma unroll
          for (int offset = 16; offset > 0; offset /= 2) {
            sums[r][t] += __shfl_xor_sync(0xffffffffu, sums[r][t], offset);
          }
          if (lane == r * group + t && t < count && row0 + r < rows) {
            C[static_cast<long long>(routed[g + t]) * rows + row0 + r] =
                __float2bfloat16(sums[r][t]);
          }
        }
      }
    }
    __syncthreads();  // the next chunk writes `routed` again
  }
}
