/* blaster
{
  "launch": [
    {"kernel": "attend_tiles<WARPS, STAGES>",
     "grid": ["ceil_div(C, ceil_div(ceil_div(C, max(1, BLOCKS / (B*KH))), 16) * 16)", "KH", "B"],
     "block": "WARPS * 32", "shared_bytes": "WARPS * STAGES * 8192",
     "args": ["part_ml", "part_acc", "q", "k_cache", "v_cache", "block_table", "seq_lens", "QH",
              "KH", "BS", "MAXB", "ceil_div(ceil_div(C, max(1, BLOCKS / (B*KH))), 16) * 16",
              "ceil_div(C, ceil_div(ceil_div(C, max(1, BLOCKS / (B*KH))), 16) * 16)", "scale"]},
    {"kernel": "combine_chunks", "grid": "B*QH", "block": 256,
     "args": ["out", "part_ml", "part_acc", "seq_lens", "QH",
              "ceil_div(ceil_div(C, max(1, BLOCKS / (B*KH))), 16) * 16",
              "ceil_div(C, ceil_div(ceil_div(C, max(1, BLOCKS / (B*KH))), 16) * 16)"]}
  ],
  "scratch": {
    "part_ml": "B*QH * ceil_div(C, ceil_div(ceil_div(C, max(1, BLOCKS / (B*KH))), 16) * 16) * 8",
    "part_acc": "B*QH * ceil_div(C, ceil_div(ceil_div(C, max(1, BLOCKS / (B*KH))), 16) * 16) * D * 4"
  },
  "params": {"WARPS": [4, 2], "STAGES": [3, 6], "BLOCKS": [264, 132, 528]}
}
*/
// Flash-decoding on the tensor cores. Each sequence's context is cut into at most BLOCKS / (B*KH)
// chunks of a multiple of 16 tokens (at most about BLOCKS blocks in all: with 96 KB of shared
// memory a block, two fit an SM, so 264 is one wave), and one block takes one chunk of one KV
// head for all of its query heads, so each K and V byte is read once. The warps take 16-token
// tiles of the chunk in turn, each through its own ring of STAGES shared-memory slots that
// cp.async fills STAGES - 1 tiles ahead (8 KB a tile: bytes in flight without registers). A tile
// costs 16 ldmatrix and 24 mma.sync m16n8k16 (bf16 in, fp32 sums) a warp, not a dot product per
// lane: S = Q K^T with the query heads as rows 0-7 of 16 (the rest zero) and the tokens
// as columns, which leaves each lane its head's scores in exactly the register layout of the
// B operand of O^T = V^T P^T (dims as rows, tokens as k, heads as columns), so P never moves
// between lanes. The softmax is fp32 and online in base-2 units (scores times scale * log2 e),
// P rounded to bf16 for the product and summed in fp32. The block merges its warps in warp
// order and writes the chunk's (max, sum, output) to scratch; a second launch merges the chunks
// of each head in a fixed order. The head size is the task's 128.
#include <cuda_bf16.h>

#include "common/cp_async.cuh"
#include "common/mma_m16n8k16.cuh"
#include "common/online_softmax.cuh"
#include "common/shared_memory.cuh"

using blaster_common::cp_async_16_line;
using blaster_common::cp_async_commit;
using blaster_common::cp_async_wait;
using blaster_common::exp2_ftz;
using blaster_common::log2e;
using blaster_common::minus_infinity;
using blaster_common::mma_16816_bf16;
using blaster_common::shared_address;

namespace {

constexpr int head_dim = 128;
constexpr int tile_tokens = 16;  // one k step of P V, two n tiles of Q K^T
constexpr int row_bytes = head_dim * 2;
constexpr int tile_bytes = tile_tokens * row_bytes;  // [bytes] of K, and again of V
constexpr int heads_per_pass = 8;                    // the n of an mma: query heads at a time
constexpr int acc_stride = head_dim + 4;  // floats a head in a warp's partial: no bank conflicts
constexpr unsigned full_mask = 0xffffffffu;

// The memory clobber keeps each read after the wait and barrier that make the tile visible.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}

__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}

__device__ __forceinline__ unsigned pack_bf16(float lo, float hi) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const unsigned*>(&h);
}

// A token row of a slot is 16 chunks of 16 bytes; chunk c of row r sits at c ^ (r % 8), so the
// 8 rows an ldmatrix reads at one chunk, and the copies of one instruction, hit distinct banks.
__device__ __forceinline__ unsigned swizzle(int row, int chunk) {
  return static_cast<unsigned>(row * row_bytes + ((chunk ^ (row & 7)) << 4));
}

}  // namespace

template <int WARPS, int STAGES>
__global__ void __launch_bounds__(WARPS * 32)
    attend_tiles(float2* __restrict__ part_ml, float* __restrict__ part_acc,
                 const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k_cache,
                 const __nv_bfloat16* __restrict__ v_cache, const int* __restrict__ block_table,
                 const int* __restrict__ seq_lens, int q_heads, int kv_heads, int block_size,
                 int max_blocks, int chunk, int chunks, float scale) {
  static_assert(STAGES >= 2, "a slot is refilled only after the tile in it was used");
  extern __shared__ __align__(128) unsigned char ring[];  // WARPS * STAGES slots of K then V
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
  const int quad_row = lane / 4;   // mma groupID: a head of S, a dim row of O^T
  const int quad_lane = lane % 4;  // mma threadID_in_group: a token pair of S, a head pair of O^T
  const int* table = block_table + static_cast<long long>(b) * max_blocks;
  const float q_scale = scale * log2e;

  unsigned char* my_ring = ring + warp * STAGES * 2 * tile_bytes;
  const unsigned ring_base = shared_address(my_ring);
  // The copies: lane pair (2r, 2r + 1) brings token row r, chunks 2i and 2i + 1 for i < 8, so
  // each instruction reads whole 32-byte sectors.
  const int copy_row = lane / 2;
  unsigned copy_to[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) copy_to[i] = swizzle(copy_row, 2 * i + lane % 2);
  // ldmatrix addresses: K as the B operand of S (matrix j: tokens 0-7 of an n tile, dims
  // 32m + 8j ..), V transposed as the A operand of O^T (matrix j: tokens 8 (j / 2) .., dims
  // 16p + 8 (j % 2) ..).
  const int k_read_row = lane % 8;
  const int v_read_row = (lane / 16) * 8 + lane % 8;
  unsigned k_read[4];
  unsigned v_read[8];
#pragma unroll
  for (int m = 0; m < 4; ++m) k_read[m] = swizzle(k_read_row, 4 * m + lane / 8);
#pragma unroll
  for (int p = 0; p < 8; ++p) v_read[p] = tile_bytes + swizzle(v_read_row, 2 * p + (lane / 8) % 2);

  const int tiles = (end - start + tile_tokens - 1) / tile_tokens;
  const int my_tiles = tiles > warp ? (tiles - warp + WARPS - 1) / WARPS : 0;
  // Token of this lane's copy row in the warp's tile j; rows past the end repeat the last token
  // (its real, finite values), whose scores are then masked to -infinity.
  auto copy_token = [&](int j) {
    return min(start + (warp + j * WARPS) * tile_tokens + copy_row, end - 1);
  };
  auto cache_block = [&](int j) { return j < my_tiles ? table[copy_token(j) / block_size] : 0; };
  auto issue = [&](int j, int cache_blk) {
    const int t = copy_token(j);
    const long long row = static_cast<long long>(cache_blk) * block_size + t % block_size;
    const long long at = (row * kv_heads + kv_head) * head_dim + (lane % 2) * 8;
    const __nv_bfloat16* k_src = k_cache + at;
    const __nv_bfloat16* v_src = v_cache + at;
    const unsigned slot = ring_base + (j % STAGES) * 2 * tile_bytes;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      cp_async_16_line(slot + copy_to[i], k_src + 16 * i);
      cp_async_16_line(slot + tile_bytes + copy_to[i], v_src + 16 * i);
    }
  };

  for (int h0 = 0; h0 < group; h0 += heads_per_pass) {
    const int heads = min(heads_per_pass, group - h0);
    const long long first_head = static_cast<long long>(b) * q_heads + kv_head * group + h0;

    // Q as the A operand of S: row quad_row is head h0 + quad_row, rows 8-15 are zero. A head
    // past the group has a zero query; its results are never written.
    unsigned qa[8][2];
    {
      const __nv_bfloat16* query = q + (first_head + quad_row) * head_dim + 2 * quad_lane;
#pragma unroll
      for (int kk = 0; kk < 8; ++kk) {
        qa[kk][0] = quad_row < heads ? *reinterpret_cast<const unsigned*>(query + 16 * kk) : 0u;
        qa[kk][1] =
            quad_row < heads ? *reinterpret_cast<const unsigned*>(query + 16 * kk + 8) : 0u;
      }
    }

    // The table lookups of the first STAGES tiles are independent loads; later ones run a
    // whole tile ahead of the copies that need them.
    int blk[STAGES];
#pragma unroll
    for (int j = 0; j < STAGES; ++j) blk[j] = cache_block(j);
#pragma unroll
    for (int j = 0; j < STAGES - 1; ++j) {
      if (j < my_tiles) issue(j, blk[j]);
      cp_async_commit();  // one group per tile, empty or not, so the count in wait stays exact
    }
    int next_blk = blk[STAGES - 1];

    float m = minus_infinity();  // head quad_row's running max, the same in its four lanes
    float l = 0.0f;              // this lane's share of head quad_row's sum
    // O^T: acc[p] holds dims 16p + quad_row (0, 1) and 16p + 8 + quad_row (2, 3) of heads
    // 2 quad_lane (0, 2) and 2 quad_lane + 1 (1, 3).
    float acc[8][4];
#pragma unroll
    for (int p = 0; p < 8; ++p) {
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[p][i] = 0.0f;
    }

    for (int i = 0; i < my_tiles; ++i) {
      cp_async_wait<STAGES - 2>();  // group i, tile i, has landed for this lane
      __syncwarp();                 // and for every lane; and tile i - 1's slot is free
      const int j = i + STAGES - 1;
      if (j < my_tiles) issue(j, next_blk);
      cp_async_commit();
      next_blk = cache_block(j + 1);

      const unsigned slot = ring_base + (i % STAGES) * 2 * tile_bytes;
      const int tokens = min(tile_tokens, end - (start + (warp + i * WARPS) * tile_tokens));

      // S = Q K^T for tokens 0-7 (n tile 0) and 8-15 (n tile 1); even and odd k steps in
      // separate sums for shorter dependency chains, added in a fixed order.
      float s[2][2][4];
#pragma unroll
      for (int nt = 0; nt < 2; ++nt) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
#pragma unroll
          for (int e = 0; e < 4; ++e) s[nt][h][e] = 0.0f;
        }
      }
#pragma unroll
      for (int mk = 0; mk < 4; ++mk) {
#pragma unroll
        for (int nt = 0; nt < 2; ++nt) {
          unsigned kb[4];
          ldmatrix_x4(kb, slot + nt * 8 * row_bytes + k_read[mk]);
          mma_16816_bf16(s[nt][0], qa[2 * mk][0], 0u, qa[2 * mk][1], 0u, kb[0], kb[1]);
          mma_16816_bf16(s[nt][1], qa[2 * mk + 1][0], 0u, qa[2 * mk + 1][1], 0u, kb[2], kb[3]);
        }
      }
      // V's fragments now, so their reads overlap the softmax.
      unsigned va[8][4];
#pragma unroll
      for (int p = 0; p < 8; ++p) ldmatrix_x4_trans(va[p], slot + v_read[p]);
      // This lane's scores: head quad_row, tokens 8 nt + 2 quad_lane + e.
      float x[2][2];
      float top = minus_infinity();
#pragma unroll
      for (int nt = 0; nt < 2; ++nt) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float v = (s[nt][0][e] + s[nt][1][e]) * q_scale;
          x[nt][e] = 8 * nt + 2 * quad_lane + e < tokens ? v : minus_infinity();
          top = fmaxf(top, x[nt][e]);
        }
      }
      // Token 0 of a tile is always valid, so the quad's max is finite.
      top = fmaxf(top, __shfl_xor_sync(full_mask, top, 1));
      top = fmaxf(top, __shfl_xor_sync(full_mask, top, 2));
      if (__any_sync(full_mask, top > m)) {
        const float m_new = fmaxf(m, top);
        const float alpha = exp2_ftz(m - m_new);  // 1 where the max held, 0 from -infinity
        l *= alpha;
        m = m_new;
        // The columns of O^T are heads 2 quad_lane and 2 quad_lane + 1: their factors come
        // from the quads that own those heads.
        const float alpha_lo = __shfl_sync(full_mask, alpha, 8 * quad_lane);
        const float alpha_hi = __shfl_sync(full_mask, alpha, 8 * quad_lane + 4);
#pragma unroll
        for (int p = 0; p < 8; ++p) {
          acc[p][0] *= alpha_lo;
          acc[p][1] *= alpha_hi;
          acc[p][2] *= alpha_lo;
          acc[p][3] *= alpha_hi;
        }
      }
      float w[2][2];
#pragma unroll
      for (int nt = 0; nt < 2; ++nt) {
#pragma unroll
        for (int e = 0; e < 2; ++e) w[nt][e] = exp2_ftz(x[nt][e] - m);  // -infinity: 0
      }
      l += (w[0][0] + w[0][1]) + (w[1][0] + w[1][1]);
      // P^T as the B operand: k = tokens 2 quad_lane (+1) and 8 + 2 quad_lane (+1), n = head
      // quad_row: the very registers of S.
      const unsigned pb0 = pack_bf16(w[0][0], w[0][1]);
      const unsigned pb1 = pack_bf16(w[1][0], w[1][1]);
#pragma unroll
      for (int p = 0; p < 8; ++p) {
        mma_16816_bf16(acc[p], va[p][0], va[p][1], va[p][2], va[p][3], pb0, pb1);
      }
    }
    cp_async_wait<0>();
    __syncwarp();  // every lane is done with the ring: it now holds the warp's partial

    // The quad's four shares of each head's sum, in the same order in every lane.
    l += __shfl_xor_sync(full_mask, l, 1);
    l += __shfl_xor_sync(full_mask, l, 2);
    float* warp_acc = reinterpret_cast<float*>(my_ring);  // [heads_per_pass][acc_stride]
    float* warp_m = warp_acc + heads_per_pass * acc_stride;
    float* warp_l = warp_m + heads_per_pass;
#pragma unroll
    for (int p = 0; p < 8; ++p) {
      const int d = 16 * p + quad_row;
      warp_acc[(2 * quad_lane) * acc_stride + d] = acc[p][0];
      warp_acc[(2 * quad_lane + 1) * acc_stride + d] = acc[p][1];
      warp_acc[(2 * quad_lane) * acc_stride + d + 8] = acc[p][2];
      warp_acc[(2 * quad_lane + 1) * acc_stride + d + 8] = acc[p][3];
    }
    if (quad_lane == 0) {
      warp_m[quad_row] = m;  // -infinity for a warp that had no tile: it adds nothing
      warp_l[quad_row] = l;
    }
    __syncthreads();
    // The warps merged in warp order; warp 0 had token `start`, so the max is finite.
    constexpr int ring_floats = STAGES * 2 * tile_bytes / 4;
    const float* all = reinterpret_cast<const float*>(ring);
    for (int e = threadIdx.x; e < heads * head_dim; e += WARPS * 32) {
      const int g = e / head_dim;
      const int d = e % head_dim;
      float top = minus_infinity();
#pragma unroll
      for (int w = 0; w < WARPS; ++w) {
        top = fmaxf(top, all[w * ring_floats + heads_per_pass * acc_stride + g]);
      }
      float sum = 0.0f;
      float out = 0.0f;
#pragma unroll
      for (int w = 0; w < WARPS; ++w) {
        const float* part = all + w * ring_floats;
        const float mw = part[heads_per_pass * acc_stride + g];
        if (mw == minus_infinity()) continue;
        const float alpha = exp2_ftz(mw - top);
        sum = fmaf(part[heads_per_pass * acc_stride + heads_per_pass + g], alpha, sum);
        out = fmaf(part[g * acc_stride + d], alpha, out);
      }
      const long long slot = (first_head + g) * chunks + blockIdx.x;
      part_acc[slot * head_dim + d] = out;
      if (d == 0) part_ml[slot] = make_float2(top, sum);
    }
    __syncthreads();  // the next group of heads refills the rings
  }
}

// One block per sequence and query head: warp w folds chunks w, w + 8, ... in order, lane i
// owning dims 4i .. 4i + 3, and the warps merge in warp order; a sequence of length 0 gives
// zeros. Every load of a warp is independent of the others, so one L2 round trip covers them.
extern "C" __global__ void __launch_bounds__(256)
    combine_chunks(__nv_bfloat16* __restrict__ out, const float2* __restrict__ part_ml,
                   const float* __restrict__ part_acc, const int* __restrict__ seq_lens,
                   int q_heads, int chunk, int chunks) {
  constexpr int warps = 8;
  __shared__ float warp_m[warps];
  __shared__ float warp_l[warps];
  __shared__ float4 warp_o[warps][32];
  const long long bh = blockIdx.x;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int length = seq_lens[bh / q_heads];
  const int n = (length + chunk - 1) / chunk;  // the chunks that hold tokens, all written
  const float2* ml = part_ml + bh * chunks;
  const float4* acc = reinterpret_cast<const float4*>(part_acc + bh * chunks * head_dim);

  float m = minus_infinity();
  float l = 0.0f;
  float4 o = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll 4
  for (int c = warp; c < n; c += warps) {
    const float2 part = ml[c];  // a written chunk's max is finite
    const float4 a = acc[static_cast<long long>(c) * (head_dim / 4) + lane];
    const float m_new = fmaxf(m, part.x);
    const float alpha = exp2_ftz(m - m_new);  // 0 from -infinity
    const float beta = exp2_ftz(part.x - m_new);
    l = fmaf(l, alpha, part.y * beta);
    o.x = fmaf(o.x, alpha, a.x * beta);
    o.y = fmaf(o.y, alpha, a.y * beta);
    o.z = fmaf(o.z, alpha, a.z * beta);
    o.w = fmaf(o.w, alpha, a.w * beta);
    m = m_new;
  }
  warp_o[warp][lane] = o;
  if (lane == 0) {
    warp_m[warp] = m;
    warp_l[warp] = l;
  }
  __syncthreads();
  if (warp != 0) return;
  float top = minus_infinity();
#pragma unroll
  for (int w = 0; w < warps; ++w) top = fmaxf(top, warp_m[w]);
  float sum = 0.0f;
  float4 r = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
  for (int w = 0; w < warps; ++w) {
    if (warp_m[w] == minus_infinity()) continue;  // a warp with no chunk
    const float alpha = exp2_ftz(warp_m[w] - top);
    const float4 v = warp_o[w][lane];
    sum = fmaf(warp_l[w], alpha, sum);
    r.x = fmaf(v.x, alpha, r.x);
    r.y = fmaf(v.y, alpha, r.y);
    r.z = fmaf(v.z, alpha, r.z);
    r.w = fmaf(v.w, alpha, r.w);
  }
  // A sequence of length 0 attends to nothing: zeros, not 0 / 0.
  if (n == 0) r = make_float4(0.0f, 0.0f, 0.0f, 0.0f), sum = 1.0f;
  const __nv_bfloat162 lo = __floats2bfloat162_rn(r.x / sum, r.y / sum);
  const __nv_bfloat162 hi = __floats2bfloat162_rn(r.z / sum, r.w / sum);
  uint2 packed;
  packed.x = *reinterpret_cast<const unsigned*>(&lo);
  packed.y = *reinterpret_cast<const unsigned*>(&hi);
  *reinterpret_cast<uint2*>(out + bh * head_dim + 4 * lane) = packed;
}
