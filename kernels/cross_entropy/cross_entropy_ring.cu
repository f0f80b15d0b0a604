/* blaster
{
  "launch": [
    {"kernel": "cross_entropy_ring<WARPS, PER_SM>", "grid": "SMS * PER_SM", "block": "WARPS * 32",
     "shared_bytes": "min(196608 / PER_SM, WARPS * 8 * ceil_div(C, 8) * 16)",
     "args": ["loss", "partial", "logits", "targets", "N", "C"]}
  ],
  "cooperative": true,
  "max_dynamic_shared_bytes": "min(196608 / PER_SM, WARPS * 8 * ceil_div(C, 8) * 16)",
  "scratch": {"partial": "SMS * PER_SM * 4"},
  "params": {"SMS": [132], "WARPS": [4, 8, 12, 16], "PER_SM": [1, 2]}
}
*/
// Bytes in flight without the instructions to keep them there: a resident grid where each warp
// streams its rows through its own ring of shared-memory stages, a row per bulk copy (TMA), so
// 100+ KB per SM are requested while rows already landed are folded (max, then sums of exp) in
// fp32. Each block owns an equal run of rows, so there is no tail wave; the blocks meet at one
// grid barrier and block 0 adds their sums in a fixed order: one launch, bitwise reproducible.
#include <cooperative_groups.h>
#include <cuda_fp16.h>

#include "common/bulk_copy.cuh"
#include "common/online_softmax.cuh"

namespace {

using blaster_common::bulk_fetch;
using blaster_common::empty_pack;
using blaster_common::exp2_ftz;
using blaster_common::fold_packs;
using blaster_common::fold_value;
using blaster_common::log2e;
using blaster_common::minus_infinity;
using blaster_common::online;
using blaster_common::online_empty;
using blaster_common::warp_total;
using blaster_common::dynamic_shared_bytes;
using blaster_common::mbarrier_init;
using blaster_common::mbarrier_wait;

namespace cg = cooperative_groups;

constexpr int thread_row_classes = 32;  // up to this many classes, a thread owns a row
constexpr int max_stages = 8;           // per warp
constexpr int group_packs = 8;          // 16-byte packs per lane in flight from shared memory

// -log_softmax(row)[target] for a short row, by one thread; the second pass hits L1.
__device__ float row_loss_thread(const __half* row, int classes, long long target) {
  float m = minus_infinity();
  for (int j = 0; j < classes; ++j) m = fmaxf(m, __half2float(__ldg(row + j)));
  const float shift = -m * log2e;
  float s = 0.0f;
  for (int j = 0; j < classes; ++j) s += exp2_ftz(fmaf(__half2float(__ldg(row + j)), log2e, shift));
  return m + logf(s) - __half2float(__ldg(row + target));
}

// The same for a long row read straight from global memory by a warp, returned to every lane.
__device__ float row_loss_warp(const __half* row, int classes, long long target, bool vector) {
  const int lane = threadIdx.x % 32;
  online acc = online_empty();
  if (vector) {
    const uint4* packs = reinterpret_cast<const uint4*>(row);
    const int count = classes / 8;
    int p = lane;
    for (; p + 3 * 32 < count; p += 4 * 32) {
      const uint4 v[4] = {__ldcs(packs + p), __ldcs(packs + p + 32), __ldcs(packs + p + 64),
                          __ldcs(packs + p + 96)};
      fold_packs<4>(acc, v);
    }
    for (; p < count; p += 32) {
      const uint4 v[1] = {__ldcs(packs + p)};
      fold_packs<1>(acc, v);
    }
  } else {
    for (int j = lane; j < classes; j += 32) fold_value(acc, __half2float(row[j]));
  }
  acc = warp_total(acc);
  return acc.m + logf(acc.s) - __half2float(row[target]);
}


}  // namespace

template <int WARPS, int PER_SM>
__global__ void __launch_bounds__(WARPS * 32, PER_SM)
    cross_entropy_ring(float* __restrict__ loss, float* __restrict__ partial,
                       const __half* __restrict__ logits, const long long* __restrict__ targets,
                       int rows, int classes) {
  constexpr int THREADS = WARPS * 32;
  extern __shared__ uint4 ring[];
  __shared__ unsigned long long full[WARPS * max_stages];
  __shared__ float warp_sums[WARPS];
  const cg::grid_group grid = cg::this_grid();
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int blocks = gridDim.x;
  // An equal run of rows per block (they differ by at most one).
  const int first = static_cast<int>(static_cast<long long>(rows) * blockIdx.x / blocks);
  const int last = static_cast<int>(static_cast<long long>(rows) * (blockIdx.x + 1) / blocks);
  const int row_packs = (classes + 7) / 8;
  const int stages = min(max_stages, static_cast<int>(dynamic_shared_bytes() /
                                                      (static_cast<unsigned>(WARPS) * row_packs * 16)));
  const bool staged =
      classes % 8 == 0 && reinterpret_cast<unsigned long long>(logits) % 16 == 0 && stages >= 1;

  float sum = 0.0f;  // this thread's rows' losses, in row order
  if (staged) {
    // Warp w owns rows first + w, first + w + WARPS, ...; its j-th row lands in stage j % stages
    // of its own ring, completing phase j / stages of that stage's barrier.
    uint4* own = ring + warp * stages * row_packs;
    unsigned long long* bars = full + warp * max_stages;
    const unsigned bytes = static_cast<unsigned>(classes) * 2;
    const long long stride = static_cast<long long>(stages) * WARPS;
    if (lane == 0) {
      for (int s = 0; s < stages; ++s) mbarrier_init(&bars[s]);
      asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
      for (int s = 0; s < stages; ++s) {
        const long long r = first + warp + static_cast<long long>(s) * WARPS;
        if (r < last) bulk_fetch(&bars[s], own + s * row_packs, logits + r * classes, bytes);
      }
    }
    __syncwarp();
    long long target_next = first + warp < last ? __ldg(targets + first + warp) : 0;
    int j = 0;
    for (long long r = first + warp; r < last; r += WARPS, ++j) {
      const int s = j % stages;
      const long long target = target_next;
      if (r + WARPS < last) target_next = __ldg(targets + r + WARPS);  // lands during this row
      mbarrier_wait(&bars[s], (j / stages) & 1);
      const uint4* data = own + s * row_packs;
      online acc = online_empty();
      for (int base = 0; base < row_packs; base += 32 * group_packs) {
        uint4 v[group_packs];
#pragma unroll
        for (int q = 0; q < group_packs; ++q) {
          const int p = base + lane + 32 * q;
          v[q] = p < row_packs ? data[p] : empty_pack();
        }
        fold_packs<group_packs>(acc, v);
      }
      const float target_logit = __half2float(reinterpret_cast<const __half*>(data)[target]);
      // Every lane's reads of the stage come before the copy that refills it.
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      __syncwarp();
      if (lane == 0 && r + stride < last) {
        bulk_fetch(&bars[s], own + s * row_packs, logits + (r + stride) * classes, bytes);
      }
      acc = warp_total(acc);
      if (lane == 0) sum += acc.m + logf(acc.s) - target_logit;
    }
  } else if (classes <= thread_row_classes) {
    for (int i = first + threadIdx.x; i < last; i += THREADS) {
      sum += row_loss_thread(logits + static_cast<long long>(i) * classes, classes, targets[i]);
    }
  } else {
    const bool vector = classes % 8 == 0 && reinterpret_cast<unsigned long long>(logits) % 16 == 0;
    for (int i = first + warp; i < last; i += WARPS) {
      const float l =
          row_loss_warp(logits + static_cast<long long>(i) * classes, classes, targets[i], vector);
      if (lane == 0) sum += l;
    }
  }

  // The block's sum in a fixed order: lanes by a shuffle tree, then the warps one after another.
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (lane == 0) warp_sums[warp] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.0f;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) total += warp_sums[w];
    partial[blockIdx.x] = total;
  }
  // Every block arrives (its partial released by the arrival); only block 0 waits, then adds the
  // partials in block order.
  auto arrived = grid.barrier_arrive();
  if (blockIdx.x != 0) return;
  grid.barrier_wait(std::move(arrived));
  if (warp == 0) {
    float total = 0.0f;
    for (int b = lane; b < blocks; b += 32) total += __ldcg(partial + b);
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
      total += __shfl_down_sync(0xffffffffu, total, offset);
    }
    if (lane == 0) loss[0] = total / rows;
  }
}
