/* blaster
{
  "launch": [
    {"kernel": "attend_chunks<HG, WARPS>",
     "grid": ["ceil_div(C, ceil_div(ceil_div(C, ceil_div(BLOCKS, B*KH)), 32) * 32)", "KH", "B"],
     "block": "WARPS * 32",
     "args": ["part_ml", "part_acc", "q", "k_cache", "v_cache", "block_table", "seq_lens", "QH",
              "KH", "BS", "MAXB", "ceil_div(ceil_div(C, ceil_div(BLOCKS, B*KH)), 32) * 32",
              "ceil_div(C, ceil_div(ceil_div(C, ceil_div(BLOCKS, B*KH)), 32) * 32)", "scale"]},
    {"kernel": "combine_chunks", "grid": "B*QH", "block": 128,
     "args": ["out", "part_ml", "part_acc", "seq_lens", "QH", "D",
              "ceil_div(ceil_div(C, ceil_div(BLOCKS, B*KH)), 32) * 32",
              "ceil_div(C, ceil_div(ceil_div(C, ceil_div(BLOCKS, B*KH)), 32) * 32)"]}
  ],
  "scratch": {
    "part_ml": "B*QH * ceil_div(C, ceil_div(ceil_div(C, ceil_div(BLOCKS, B*KH)), 32) * 32) * 8",
    "part_acc": "B*QH * ceil_div(C, ceil_div(ceil_div(C, ceil_div(BLOCKS, B*KH)), 32) * 32) * D * 4"
  },
  "params": {"HG": [4, 8], "WARPS": [4], "BLOCKS": [264, 396, 528, 792]}
}
*/
// Flash-decoding: each sequence's context is cut into chunks of a multiple of 32 tokens, sized so
// that at most about BLOCKS blocks cover the batch's KV heads (at about 150 registers for HG = 4,
// 3 blocks of 4 warps fit an SM: 396 is one wave, 792 two), and one block takes one chunk of one KV
// head for all of its query heads (HG at a time), so each K and V byte is read once. Each warp
// streams 32-token tiles of the chunk with 16-byte loads, 16 lanes to a row, keeping an fp32
// online softmax per head; the block merges its warps and writes the chunk's (max, sum, output)
// to scratch, and a second launch merges the chunks of each head in chunk order. Scores are kept
// in base-2 units (q is scaled by scale * log2 e) so that every exponential is one ex2. The
// head size is the task's 128: 16 lanes of 8 values.
#include <cuda_bf16.h>

#include "common/bf16_pack.cuh"
#include "common/online_softmax.cuh"
#include "common/warp_reduce.cuh"

using blaster_common::bf16x8;
using blaster_common::exp2_ftz;
using blaster_common::log2e;
using blaster_common::minus_infinity;

constexpr int head_dim = 128;
constexpr int tokens_per_lane = 4;  // a step: 4 tokens per half-warp, 8 K and V loads in flight
constexpr unsigned full_mask = 0xffffffffu;

__device__ __forceinline__ void unpack(const uint4& raw, float (&f)[8]) {
  bf16x8 p;
  p.v = raw;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float2 x = __bfloat1622float2(p.h2[k]);
    f[2 * k] = x.x;
    f[2 * k + 1] = x.y;
  }
}

template <int HG, int WARPS>
__global__ void __launch_bounds__(WARPS * 32)
    attend_chunks(float2* __restrict__ part_ml, float* __restrict__ part_acc,
                  const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k_cache,
                  const __nv_bfloat16* __restrict__ v_cache, const int* __restrict__ block_table,
                  const int* __restrict__ seq_lens, int q_heads, int kv_heads, int block_size,
                  int max_blocks, int chunk, int chunks, float scale) {
  __shared__ float warp_m[WARPS][HG];
  __shared__ float warp_l[WARPS][HG];
  __shared__ float warp_acc[WARPS][HG][head_dim];
  const int b = blockIdx.z;
  const int kv_head = blockIdx.y;
  const int length = seq_lens[b];
  const int start = blockIdx.x * chunk;
  // A chunk past the sequence writes nothing: the combine reads only chunks that hold tokens.
  if (start >= length) return;
  const int end = min(start + chunk, length);
  const int group = q_heads / kv_heads;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int half = lane / 16;
  const int part = lane % 16;  // this lane's 8 of the head's 128 values
  const int* table = block_table + static_cast<long long>(b) * max_blocks;
  const long long row_stride = static_cast<long long>(kv_heads) * head_dim;
  const long long lane_offset = static_cast<long long>(kv_head) * head_dim + part * 8;
  const float q_scale = scale * log2e;

  for (int g0 = 0; g0 < group; g0 += HG) {
    const int heads = min(HG, group - g0);
    const long long first_head = static_cast<long long>(b) * q_heads + kv_head * group + g0;
    float qf[HG][8];
#pragma unroll
    for (int g = 0; g < HG; ++g) {
      // A head past the group (HG > group) has a zero query; its results are never written.
      uint4 raw = make_uint4(0, 0, 0, 0);
      if (g < heads) raw = *reinterpret_cast<const uint4*>(q + (first_head + g) * head_dim + part * 8);
      unpack(raw, qf[g]);
#pragma unroll
      for (int i = 0; i < 8; ++i) qf[g][i] *= q_scale;
    }
    float m[HG];
    float l[HG];
    float acc[HG][8];
#pragma unroll
    for (int g = 0; g < HG; ++g) {
      m[g] = minus_infinity();
      l[g] = 0.0f;
#pragma unroll
      for (int i = 0; i < 8; ++i) acc[g][i] = 0.0f;
    }

    for (int tile = start + warp * 32; tile < end; tile += WARPS * 32) {
      const int n = min(32, end - tile);
      // Lane i finds the cache row of token tile + i once; a token past the end reads the last
      // valid row (in bounds) and gets a score of -infinity.
      const int t = tile + min(lane, n - 1);
      const int row = table[t / block_size] * block_size + t % block_size;
      for (int j = 0; j < n; j += 2 * tokens_per_lane) {
        uint4 kp[tokens_per_lane];
        uint4 vp[tokens_per_lane];
        bool valid[tokens_per_lane];
#pragma unroll
        for (int u = 0; u < tokens_per_lane; ++u) {
          const int index = j + half * tokens_per_lane + u;  // < 32: j <= 24
          valid[u] = index < n;
          const long long at = __shfl_sync(full_mask, row, index) * row_stride + lane_offset;
          kp[u] = __ldcs(reinterpret_cast<const uint4*>(k_cache + at));
          vp[u] = __ldcs(reinterpret_cast<const uint4*>(v_cache + at));
        }
        float s[tokens_per_lane][HG];
#pragma unroll
        for (int u = 0; u < tokens_per_lane; ++u) {
          float kf[8];
          unpack(kp[u], kf);
#pragma unroll
          for (int g = 0; g < HG; ++g) {
            float dot = 0.0f;
#pragma unroll
            for (int i = 0; i < 8; ++i) dot = fmaf(qf[g][i], kf[i], dot);
            s[u][g] = dot;
          }
        }
        // The 16 lanes of a row hold the same sums afterwards (a + b = b + a at every step).
#pragma unroll
        for (int mask = 8; mask > 0; mask /= 2) {
#pragma unroll
          for (int u = 0; u < tokens_per_lane; ++u) {
#pragma unroll
            for (int g = 0; g < HG; ++g) s[u][g] += __shfl_xor_sync(full_mask, s[u][g], mask);
          }
        }
#pragma unroll
        for (int g = 0; g < HG; ++g) {
          float top = minus_infinity();
#pragma unroll
          for (int u = 0; u < tokens_per_lane; ++u) {
            if (!valid[u]) s[u][g] = minus_infinity();
            top = fmaxf(top, s[u][g]);
          }
          // Token j is valid, so the step's max is finite and the same in every lane.
          top = fmaxf(top, __shfl_xor_sync(full_mask, top, 16));
          if (top > m[g]) {
            const float alpha = exp2_ftz(m[g] - top);  // m = -infinity: 0, and all is 0 yet
            l[g] *= alpha;
#pragma unroll
            for (int i = 0; i < 8; ++i) acc[g][i] *= alpha;
            m[g] = top;
          }
        }
#pragma unroll
        for (int u = 0; u < tokens_per_lane; ++u) {
          float vf[8];
          unpack(vp[u], vf);
#pragma unroll
          for (int g = 0; g < HG; ++g) {
            const float p = exp2_ftz(s[u][g] - m[g]);  // -infinity: 0
            l[g] += p;
#pragma unroll
            for (int i = 0; i < 8; ++i) acc[g][i] = fmaf(p, vf[i], acc[g][i]);
          }
        }
      }
    }

    // The two halves share each head's max: their sums add.
#pragma unroll
    for (int g = 0; g < HG; ++g) {
      l[g] += __shfl_xor_sync(full_mask, l[g], 16);
#pragma unroll
      for (int i = 0; i < 8; ++i) acc[g][i] += __shfl_xor_sync(full_mask, acc[g][i], 16);
    }
    if (half == 0) {
#pragma unroll
      for (int g = 0; g < HG; ++g) {
#pragma unroll
        for (int i = 0; i < 8; ++i) warp_acc[warp][g][part * 8 + i] = acc[g][i];
      }
    }
    if (lane == 0) {
#pragma unroll
      for (int g = 0; g < HG; ++g) {
        warp_m[warp][g] = m[g];
        warp_l[warp][g] = l[g];
      }
    }
    __syncthreads();
    // The warps merged in warp order; a warp that had no tile holds -infinity and adds nothing.
    // Warp 0 had token `start`, so the max is finite.
    for (int e = threadIdx.x; e < heads * head_dim; e += WARPS * 32) {
      const int g = e / head_dim;
      const int d = e % head_dim;
      float top = minus_infinity();
#pragma unroll
      for (int w = 0; w < WARPS; ++w) top = fmaxf(top, warp_m[w][g]);
      float sum = 0.0f;
      float out = 0.0f;
#pragma unroll
      for (int w = 0; w < WARPS; ++w) {
        if (warp_m[w][g] == minus_infinity()) continue;
        const float alpha = exp2_ftz(warp_m[w][g] - top);
        sum = fmaf(warp_l[w][g], alpha, sum);
        out = fmaf(warp_acc[w][g][d], alpha, out);
      }
      const long long slot = (first_head + g) * chunks + blockIdx.x;
      part_acc[slot * head_dim + d] = out;
      if (d == 0) part_ml[slot] = make_float2(top, sum);
    }
    __syncthreads();  // the next group of heads reuses the shared arrays
  }
}

// One block per sequence and query head: its chunks' partial results merged in chunk order, each
// scaled from its own max to the overall one; a sequence of length 0 gives zeros.
extern "C" __global__ void __launch_bounds__(128)
    combine_chunks(__nv_bfloat16* __restrict__ out, const float2* __restrict__ part_ml,
                   const float* __restrict__ part_acc, const int* __restrict__ seq_lens,
                   int q_heads, int dim, int chunk, int chunks) {
  __shared__ float warp_part[4];
  const long long bh = blockIdx.x;
  const int length = seq_lens[bh / q_heads];
  const int n = (length + chunk - 1) / chunk;  // the chunks that hold tokens, all written
  const float2* ml = part_ml + bh * chunks;
  const float* acc = part_acc + bh * chunks * dim;

  float top = minus_infinity();
  for (int c = threadIdx.x; c < n; c += 128) top = fmaxf(top, ml[c].x);
  top = blaster_common::warp_max(top);
  if (threadIdx.x % 32 == 0) warp_part[threadIdx.x / 32] = top;
  __syncthreads();
  top = fmaxf(fmaxf(warp_part[0], warp_part[1]), fmaxf(warp_part[2], warp_part[3]));
  __syncthreads();
  float sum = 0.0f;
  for (int c = threadIdx.x; c < n; c += 128) sum += ml[c].y * exp2_ftz(ml[c].x - top);
  sum = blaster_common::warp_sum(sum);
  if (threadIdx.x % 32 == 0) warp_part[threadIdx.x / 32] = sum;
  __syncthreads();
  sum = (warp_part[0] + warp_part[1]) + (warp_part[2] + warp_part[3]);

  for (int d = threadIdx.x; d < dim; d += 128) {
    float o = 0.0f;
#pragma unroll 4
    for (int c = 0; c < n; ++c) o = fmaf(acc[static_cast<long long>(c) * dim + d], exp2_ftz(ml[c].x - top), o);
    out[bh * dim + d] = __float2bfloat16(n > 0 ? o / sum : 0.0f);
  }
}
