/* blaster
{
  "launch": [
    {"kernel": "cross_entropy_block_sums<THREADS, ROWS>", "grid": "ceil_div(N, ROWS)",
     "block": "THREADS", "args": ["block_sum", "logits", "targets", "N", "C"]},
    {"kernel": "cross_entropy_finish", "grid": 1, "block": 1024,
     "args": ["loss", "block_sum", "ceil_div(N, ROWS)", "N"]}
  ],
  "scratch": {"block_sum": "ceil_div(N, ROWS) * 4"},
  "params": {"THREADS": [256], "ROWS": [64]}
}
*/
// For the large shape, bandwidth first: every multiprocessor streams rows with 16-byte loads,
// a warp per row folding (max, sum of exp) online so the logits are read once, and each block
// writes the sum of its rows' losses; a second kernel adds those in a fixed order, so the mean
// is reproducible to the bit without atomics.
#include <cuda_fp16.h>

namespace {

constexpr float log2e = 1.4426950408889634f;
constexpr int thread_row_classes = 32;  // up to this many classes, a thread owns a row

__device__ float minus_infinity() { return __int_as_float(0xff800000); }

union pack {
  uint4 v;
  __half2 h2[4];
};

struct online {
  float m;
  float s;
};

// Symmetric in a and b, so every lane of a butterfly gets the same bits.
__device__ online combine(online a, online b) {
  if (a.m == minus_infinity()) return b;
  if (b.m == minus_infinity()) return a;
  const float m = fmaxf(a.m, b.m);
  return {m, a.s * exp2f((a.m - m) * log2e) + b.s * exp2f((b.m - m) * log2e)};
}

// The max of a pack and the sum of exp(v - max) over it.
__device__ online of_pack(uint4 v) {
  pack u;
  u.v = v;
  const __half2 hm = __hmax2(__hmax2(u.h2[0], u.h2[1]), __hmax2(u.h2[2], u.h2[3]));
  const float m = fmaxf(__low2float(hm), __high2float(hm));
  const float shift = -m * log2e;
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float2 f = __half22float2(u.h2[k]);
    s += exp2f(fmaf(f.x, log2e, shift)) + exp2f(fmaf(f.y, log2e, shift));
  }
  return {m, s};
}

// The block's sum in thread 0, in a fixed order: each warp's lanes by shuffles, then the warps'
// sums one after another. `warps` holds one float per warp of the block.
__device__ float block_total(float sum, float* warps, int warp_count) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = sum;
  __syncthreads();
  float total = 0.0f;
  if (threadIdx.x == 0) {
    for (int w = 0; w < warp_count; ++w) total += warps[w];
  }
  return total;
}

__device__ float row_loss_thread(const __half* row, int classes, long long target) {
  float m = minus_infinity();
  for (int j = 0; j < classes; ++j) m = fmaxf(m, __half2float(__ldg(row + j)));
  const float shift = -m * log2e;
  float s = 0.0f;
  for (int j = 0; j < classes; ++j) s += exp2f(fmaf(__half2float(__ldg(row + j)), log2e, shift));
  return m + logf(s) - __half2float(__ldg(row + target));
}

// A warp's loss for one row, returned to every lane. Four packs per lane are in flight at once.
__device__ float row_loss_warp(const __half* row, int classes, long long target, bool vector) {
  const int lane = threadIdx.x % 32;
  online acc = {minus_infinity(), 0.0f};
  if (vector) {
    const uint4* packs = reinterpret_cast<const uint4*>(row);
    const int count = classes / 8;
    int p = lane;
    for (; p + 3 * 32 < count; p += 4 * 32) {
      const uint4 a = __ldcs(packs + p);
      const uint4 b = __ldcs(packs + p + 32);
      const uint4 c = __ldcs(packs + p + 64);
      const uint4 d = __ldcs(packs + p + 96);
      acc = combine(acc, combine(combine(of_pack(a), of_pack(b)), combine(of_pack(c), of_pack(d))));
    }
    for (; p < count; p += 32) acc = combine(acc, of_pack(__ldcs(packs + p)));
  } else {
    for (int j = lane; j < classes; j += 32) acc = combine(acc, {__half2float(row[j]), 1.0f});
  }
#pragma unroll
  for (int mask = 16; mask > 0; mask /= 2) {
    const online other = {__shfl_xor_sync(0xffffffffu, acc.m, mask),
                          __shfl_xor_sync(0xffffffffu, acc.s, mask)};
    acc = combine(acc, other);
  }
  return acc.m + logf(acc.s) - __half2float(row[target]);
}

}  // namespace

template <int THREADS, int ROWS>
__global__ void __launch_bounds__(THREADS)
    cross_entropy_block_sums(float* __restrict__ block_sum, const __half* __restrict__ logits,
                             const long long* __restrict__ targets, int rows, int classes) {
  __shared__ float warps[THREADS / 32];
  const int first_row = blockIdx.x * ROWS;
  const int last_row = min(rows, first_row + ROWS);
  float sum = 0.0f;  // this thread's rows, in row order
  if (classes <= thread_row_classes) {
    for (int i = first_row + threadIdx.x; i < last_row; i += THREADS) {
      sum += row_loss_thread(logits + static_cast<long long>(i) * classes, classes, targets[i]);
    }
  } else {
    const bool vector = classes % 8 == 0 && reinterpret_cast<unsigned long long>(logits) % 16 == 0;
    for (int i = first_row + static_cast<int>(threadIdx.x / 32); i < last_row; i += THREADS / 32) {
      const float l =
          row_loss_warp(logits + static_cast<long long>(i) * classes, classes, targets[i], vector);
      if (threadIdx.x % 32 == 0) sum += l;
    }
  }
  const float total = block_total(sum, warps, THREADS / 32);
  if (threadIdx.x == 0) block_sum[blockIdx.x] = total;
}

extern "C" __global__ void __launch_bounds__(1024)
    cross_entropy_finish(float* __restrict__ loss, const float* __restrict__ block_sum, int blocks,
                         int rows) {
  __shared__ float warps[32];
  float sum = 0.0f;
  for (int i = threadIdx.x; i < blocks; i += 1024) sum += block_sum[i];
  const float total = block_total(sum, warps, 32);
  if (threadIdx.x == 0) loss[0] = total / rows;
}
