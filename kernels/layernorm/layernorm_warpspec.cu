/* blaster
{
  "launch": [
    {"kernel": "layernorm_warpspec<STATS_WARPS, NORM_WARPS, group_packs(NORM_WARPS)>",
     "grid": "BLOCKS", "block": "32 * (2 + STATS_WARPS + NORM_WARPS)",
     "shared_bytes": "3 * ceil_div(C*H*W, 8 * BLOCKS) * 16",
     "args": ["out", "x", "weight", "bias", "sync", "B", "C*H*W", "eps"]}
  ],
  "cooperative": true,
  "max_dynamic_shared_bytes": "3 * ceil_div(C*H*W, 8 * BLOCKS) * 16",
  "scratch": {"sync": "16 + B * BLOCKS * 16"},
  "params": {"BLOCKS": [132], "STATS_WARPS": [6], "NORM_WARPS": [24, 16, 12], "HINTS": [1]}
}
*/
// No grid barrier: warp roles overlap rows. Each SM owns one slice of every row; a TMA lane streams
// rows into a 3-slice shared ring, statistics warps publish each slice's (mean, M2) to an epoch-
// tagged global slot, a merge warp polls a row's slots, and normalize warps write row r while rows
// r + 1 and r + 2 load, so DRAM always has reads and writes in flight (~64 KB per SM per stage).
//
// Roles (warp index): 0 the producer (one lane issuing cp.async.bulk, or the whole warp copying
// when x cannot be copied in bulk), 1 the merge warp, 2 .. 1 + STATS_WARPS the statistics warps,
// the rest the normalize warps (48 / NORM_WARPS packs each per group, weight and bias for the next
// group always in flight). Re-read for every row, weight and bias double what each row moves
// through the L2 (16 MiB beside x's 8 MiB in and 8 MiB out; on an H200, 6.3 us a row at the L2's
// measured throughput, about what a row takes): with at most 16 normalize warps, the other
// warpgroups hand their registers to them (setmaxnreg), which then hold a thread's whole share of
// a row of the canonical case (3972 packs a block, 125 a lane) in one group, loaded once and kept
// for every row. Per stage, four mbarriers: full (the slice landed), published (this block's slot
// is out), ready (the row's mean and scale are in row_stat), empty (every normalize warp is done
// with the stage, so the producer may refill it).
//
// Slots: sync[0] is a launch counter; from byte 16, gridDim.x x rows slots (block-major, so one
// row's slots lie in different L2 lines) of two 64-bit words {epoch << 32 | mean bits,
// epoch << 32 | M2 bits}. A launch takes epoch = counter + 1: the scratch is poisoned with one
// 32-bit pattern P in every word, so a poisoned slot's tag is P and the first epoch P + 1; a slot
// from the launch before holds that launch's epoch, the counter's value. Block 0 stores its epoch
// to the counter at its very end, once it has seen every owning block's last slot, which each
// block published after reading the counter. Each 64-bit word is one single-copy-atomic access,
// so a slot carries its own validity (one L2 round trip per poll); a fence before the slot's store
// and one after the polls (release and acquire patterns) order everything the slot implies.
//
// Every block merges a row's slots in the same order (lane-serial, then a fixed shuffle tree), so
// all blocks agree on each row's mean and scale to the bit, and runs agree with each other. The
// statistics are the existing kernel's: per slice, the mean, then squares around it; Chan's merge.
#include <cuda_fp16.h>

#include "common/moments.cuh"
#include "common/shared_memory.cuh"

#ifndef HINTS
#define HINTS 1
#endif

namespace {
using blaster_common::merge;
using blaster_common::moments;
using blaster_common::shared_address;
using blaster_common::warp_fold;

constexpr int STAGES = 3;
// Whether the normalize warps hold weight and bias across rows (see the roles above).
__host__ __device__ constexpr bool holds(int norm_warps) { return norm_warps <= 16; }
// Packs a normalize thread handles per group.
__host__ __device__ constexpr int group_packs(int norm_warps) {
  return holds(norm_warps) ? (124 + norm_warps) / norm_warps : 48 / norm_warps;
}
// Registers per thread where they are handed over: the launch's share of the register file (in
// units of 8, as ptxas allocates them, and all the launch bounds leave), of which the producer,
// merge and statistics warps keep FEW and the normalize warps take the rest.
constexpr int FEW = 56;
__host__ __device__ constexpr int launch_registers(int threads) { return 65536 / threads / 8 * 8; }
__host__ __device__ constexpr int norm_registers(int stats_warps, int norm_warps) {
  const int threads = 32 * (2 + stats_warps + norm_warps);
  const int rest = launch_registers(threads) * threads - FEW * 32 * (2 + stats_warps);
  const int each = rest / (32 * norm_warps) / 8 * 8;
  return each < 256 ? each : 256;  // setmaxnreg's limit
}
// Slots a merge lane polls at once: 32 * POLL blocks per batch, more in further batches.
constexpr int POLL = 5;

union pack {
  uint4 v;
  __half h[8];
  __half2 h2[4];
};

// ---- mbarriers (CTA scope) ----
__device__ __forceinline__ void bar_init(unsigned long long* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(bar)), "r"(count)
               : "memory");
}

__device__ __forceinline__ void bar_arrive(unsigned long long* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(shared_address(bar)) : "memory");
}

__device__ __forceinline__ void bar_arrive_expect(unsigned long long* bar, unsigned bytes) {
  asm volatile(
      "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_address(bar)),
      "r"(bytes)
      : "memory");
}

// Returns once the phase of the given parity has completed (acquire, CTA scope).
__device__ __forceinline__ void bar_wait(unsigned long long* bar, unsigned parity) {
  const unsigned at = shared_address(bar);
  unsigned done;
  do {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(at), "r"(parity)
        : "memory");
  } while (!done);
}

// ---- bulk copies and cache policies ----
__device__ __forceinline__ unsigned long long policy_evict_first() {
  unsigned long long policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
  return policy;
}

__device__ __forceinline__ unsigned long long policy_evict_last() {
  unsigned long long policy;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(policy));
  return policy;
}

// `bytes` (a multiple of 16, both addresses 16-byte aligned) from global to shared memory,
// completing on `bar` as transaction bytes.
__device__ __forceinline__ void bulk_load(void* to, const void* from, unsigned bytes,
                                          unsigned long long* bar, unsigned long long policy) {
#if HINTS
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1], %2, [%3], %4;\n" ::"r"(shared_address(to)),
      "l"(from), "r"(bytes), "r"(shared_address(bar)), "l"(policy)
      : "memory");
#else
  (void)policy;
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1], %2, [%3];\n" ::"r"(shared_address(to)),
      "l"(from), "r"(bytes), "r"(shared_address(bar))
      : "memory");
#endif
}

// Weight and bias are read by every row: kept in L2 ahead of the streaming x and out.
__device__ __forceinline__ uint4 load_kept(const uint4* from, unsigned long long policy) {
#if HINTS
  uint4 v;
  asm("ld.global.nc.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;\n"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(from), "l"(policy));
  return v;
#else
  (void)policy;
  return __ldg(from);
#endif
}

// ---- the slots and the counter (GPU scope, morally strong) ----
__device__ __forceinline__ void store_slot(ulonglong2* at, unsigned long long a,
                                           unsigned long long b) {
  asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};\n" ::"l"(at), "l"(a), "l"(b)
               : "memory");
}

__device__ __forceinline__ ulonglong2 load_slot(const ulonglong2* at) {
  ulonglong2 v;
  asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];\n"
               : "=l"(v.x), "=l"(v.y)
               : "l"(at)
               : "memory");
  return v;
}

__device__ __forceinline__ unsigned load_counter(const unsigned* at) {
  unsigned v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(at) : "memory");
  return v;
}

__device__ __forceinline__ void store_counter(unsigned* at, unsigned v) {
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;\n" ::"l"(at), "r"(v) : "memory");
}

// The sum over the statistics warps (named barrier 1), the same in every one of their threads;
// the warps' partials are added in a fixed order.
template <int WARPS>
__device__ float group_sum(float v, float* warps, int warp_in_group) {
#pragma unroll
  for (int mask = 16; mask > 0; mask /= 2) v += __shfl_xor_sync(0xffffffffu, v, mask);
  if (threadIdx.x % 32 == 0) warps[warp_in_group] = v;
  asm volatile("bar.sync 1, %0;\n" ::"n"(WARPS * 32) : "memory");
  float total = 0.0f;
#pragma unroll
  for (int w = 0; w < WARPS; ++w) total += warps[w];
  asm volatile("bar.sync 1, %0;\n" ::"n"(WARPS * 32) : "memory");  // warps is reused next
  return total;
}

__device__ bool vector_ok(int length, const void* a, const void* b, const void* c, const void* d) {
  const auto bits =
      reinterpret_cast<unsigned long long>(a) | reinterpret_cast<unsigned long long>(b) |
      reinterpret_cast<unsigned long long>(c) | reinterpret_cast<unsigned long long>(d);
  return length % 8 == 0 && bits % 16 == 0;
}

}  // namespace

template <int STATS_WARPS, int NORM_WARPS, int UNROLL>
__global__ void __launch_bounds__(32 * (2 + STATS_WARPS + NORM_WARPS), 1)
    layernorm_warpspec(__half* __restrict__ out, const __half* __restrict__ x,
                       const __half* __restrict__ weight, const __half* __restrict__ bias,
                       unsigned* sync, int rows, int length, float eps) {
  constexpr int STATS_THREADS = 32 * STATS_WARPS;
  constexpr int NORM_THREADS = 32 * NORM_WARPS;
  constexpr int FIRST_NORM_WARP = 2 + STATS_WARPS;
  constexpr bool HOLD = holds(NORM_WARPS);
  // setmaxnreg moves registers between whole warpgroups.
  static_assert(!HOLD || (FIRST_NORM_WARP % 4 == 0 && NORM_WARPS % 4 == 0));
  extern __shared__ uint4 ring_storage[];
  __shared__ unsigned long long full[STAGES];
  __shared__ unsigned long long ready[STAGES];
  __shared__ unsigned long long empty[STAGES];
  __shared__ unsigned long long published[STAGES];
  __shared__ float2 row_stat[STAGES];  // the row's mean and 1 / sqrt(var + eps)
  __shared__ float stat_warps[STATS_WARPS];
  __shared__ unsigned epoch_shared;

  const int blocks = gridDim.x;
  // Slices are whole 16-byte packs; blocks past the row's end own nothing and leave at once
  // (no block waits for them: a slot is polled only for blocks that own elements).
  const int slice = (length + 8 * blocks - 1) / (8 * blocks) * 8;
  const int active = (length + slice - 1) / slice;
  if (static_cast<int>(blockIdx.x) >= active) return;
  const int begin = static_cast<int>(blockIdx.x) * slice;
  const int n = min(slice, length - begin);
  const bool vector = vector_ok(length, x, out, weight, bias);
  __half* ring = reinterpret_cast<__half*>(ring_storage);
  ulonglong2* slots = reinterpret_cast<ulonglong2*>(sync + 4);

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      bar_init(&full[s], 1);
      bar_init(&ready[s], 1);
      bar_init(&empty[s], NORM_WARPS);
      bar_init(&published[s], 1);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    epoch_shared = load_counter(sync) + 1u;
  }
  __syncthreads();
  const unsigned epoch = epoch_shared;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;

  // setmaxnreg moves registers between whole warpgroups: one instruction each way, executed by
  // every warp of the warpgroups on its side.
  if (warp < FIRST_NORM_WARP) {
    if constexpr (HOLD) asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(FEW));
    if (warp == 0) {
      // ---- producer: row r into stage r % STAGES once the normalize warps freed it ----
      if (vector) {
        if (lane == 0) {
          const unsigned long long policy = policy_evict_first();
          for (int r = 0; r < rows; ++r) {
            const int s = r % STAGES;
            if (r >= STAGES) bar_wait(&empty[s], (r / STAGES - 1) & 1);
            bar_arrive_expect(&full[s], static_cast<unsigned>(n) * 2u);
            bulk_load(ring + s * slice, x + static_cast<long long>(r) * length + begin,
                      static_cast<unsigned>(n) * 2u, &full[s], policy);
          }
        }
      } else {
        for (int r = 0; r < rows; ++r) {
          const int s = r % STAGES;
          if (r >= STAGES) bar_wait(&empty[s], (r / STAGES - 1) & 1);
          const __half* from = x + static_cast<long long>(r) * length + begin;
          __half* to = ring + s * slice;
          for (int i = lane; i < n; i += 32) to[i] = from[i];
          __syncwarp();
          if (lane == 0) bar_arrive(&full[s]);
        }
      }
    } else if (warp == 1) {
      // ---- merge: wait for every owning block's slot of row r, fold them, hand out the row ----
      for (int r = 0; r < rows; ++r) {
        const int s = r % STAGES;
        // This block's own slot going out is a cheap local sign that the others are close: the
        // polls start when they will mostly succeed at once.
        bar_wait(&published[s], (r / STAGES) & 1);
        moments m = {};
        for (int base = 0; base < active; base += 32 * POLL) {
          unsigned long long mean_word[POLL], m2_word[POLL];
          for (;;) {
            // All of a lane's polls in flight at once, then the checks.
#pragma unroll
            for (int k = 0; k < POLL; ++k) {
              const int b = base + lane + 32 * k;
              if (b < active) {
                const ulonglong2 v = load_slot(slots + static_cast<long long>(b) * rows + r);
                mean_word[k] = v.x;
                m2_word[k] = v.y;
              }
            }
            bool ok = true;
#pragma unroll
            for (int k = 0; k < POLL; ++k) {
              const int b = base + lane + 32 * k;
              if (b < active) {
                ok &= static_cast<unsigned>(mean_word[k] >> 32) == epoch;
                ok &= static_cast<unsigned>(m2_word[k] >> 32) == epoch;
              }
            }
            if (__all_sync(0xffffffffu, ok)) break;
            __nanosleep(128);
          }
#pragma unroll
          for (int k = 0; k < POLL; ++k) {
            const int b = base + lane + 32 * k;
            if (b < active) {
              const float count = static_cast<float>(min(slice, length - b * slice));
              m = merge(m, {count, __uint_as_float(static_cast<unsigned>(mean_word[k])),
                            __uint_as_float(static_cast<unsigned>(m2_word[k]))});
            }
          }
        }
        __threadfence();  // acquire pattern: the polls above, then this fence
        m = warp_fold(m);
        __syncwarp();
        if (lane == 0) {
          row_stat[s] = make_float2(m.mean, rsqrtf(m.m2 / m.count + eps));
          bar_arrive(&ready[s]);
        }
      }
      // Every owning block has published its last slot, so every one has read the counter: the
      // next launch may take the next epoch.
      __syncwarp();
      if (blockIdx.x == 0 && lane == 0) store_counter(sync, epoch);
    } else {
      // ---- statistics: the slice's mean, then squares around it (no cancellation) ----
      const int t = static_cast<int>(threadIdx.x) - 64;
      const int group_warp = warp - 2;
      const int n8 = n / 8;
      for (int r = 0; r < rows; ++r) {
        const int s = r % STAGES;
        bar_wait(&full[s], (r / STAGES) & 1);
        const __half* data = ring + s * slice;
        const uint4* packs = reinterpret_cast<const uint4*>(data);
        float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        if (vector) {
#pragma unroll 4
          for (int p = t; p < n8; p += STATS_THREADS) {
            pack u;
            u.v = packs[p];
#pragma unroll
            for (int k = 0; k < 4; ++k) {
              const float2 f = __half22float2(u.h2[k]);
              acc[k] += f.x + f.y;
            }
          }
        } else {
          for (int i = t; i < n; i += STATS_THREADS) acc[0] += __half2float(data[i]);
        }
        const float total =
            group_sum<STATS_WARPS>((acc[0] + acc[1]) + (acc[2] + acc[3]), stat_warps, group_warp);
        const float mean = total / static_cast<float>(n);
#pragma unroll
        for (int k = 0; k < 4; ++k) acc[k] = 0.0f;
        if (vector) {
#pragma unroll 4
          for (int p = t; p < n8; p += STATS_THREADS) {
            pack u;
            u.v = packs[p];
#pragma unroll
            for (int k = 0; k < 4; ++k) {
              const float2 f = __half22float2(u.h2[k]);
              const float dx = f.x - mean;
              const float dy = f.y - mean;
              acc[k] = fmaf(dx, dx, fmaf(dy, dy, acc[k]));
            }
          }
        } else {
          for (int i = t; i < n; i += STATS_THREADS) {
            const float d = __half2float(data[i]) - mean;
            acc[0] = fmaf(d, d, acc[0]);
          }
        }
        const float m2 =
            group_sum<STATS_WARPS>((acc[0] + acc[1]) + (acc[2] + acc[3]), stat_warps, group_warp);
        if (t == 0) {
          const unsigned long long tag = static_cast<unsigned long long>(epoch) << 32;
          __threadfence();  // release pattern: this fence, then the slot's store
          store_slot(slots + static_cast<long long>(blockIdx.x) * rows + r,
                     tag | __float_as_uint(mean), tag | __float_as_uint(m2));
          bar_arrive(&published[s]);
        }
      }
    }
  } else {
    if constexpr (HOLD) {
      asm volatile(
          "setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(norm_registers(STATS_WARPS, NORM_WARPS)));
    }
    // ---- normalize: row r from its stage, weight and bias from L2, out streamed past L2 ----
    const int t = static_cast<int>(threadIdx.x) - 32 * FIRST_NORM_WARP;
    const int n8 = vector ? n / 8 : 0;
    const unsigned long long policy = policy_evict_last();
    const uint4* w = reinterpret_cast<const uint4*>(weight + begin);
    const uint4* b = reinterpret_cast<const uint4*>(bias + begin);
    // Weight and bias do not depend on the row: the next group's are always in flight,
    // across the wait for the row's totals too.
    pack uw[UNROLL], ub[UNROLL];
#pragma unroll
    for (int j = 0; j < UNROLL; ++j) {
      const int p = t + j * NORM_THREADS;
      if (p < n8) {
        uw[j].v = load_kept(w + p, policy);
        ub[j].v = load_kept(b + p, policy);
      }
    }
    for (int r = 0; r < rows; ++r) {
      const int s = r % STAGES;
      bar_wait(&full[s], (r / STAGES) & 1);
      bar_wait(&ready[s], (r / STAGES) & 1);
      const float2 stat = row_stat[s];
      const float mean = stat.x;
      const float scale = stat.y;
      const __half* data = ring + s * slice;
      __half* to = out + static_cast<long long>(r) * length + begin;
      if (vector) {
        const uint4* packs = reinterpret_cast<const uint4*>(data);
        uint4* dst = reinterpret_cast<uint4*>(to);
        for (int first = t; first < n8; first += UNROLL * NORM_THREADS) {
          // The group whose weight and bias load next: the row's next, or the next row's first.
          const int after = first + UNROLL * NORM_THREADS;
          const int next = after < n8 ? after : (r + 1 < rows ? t : n8);
#pragma unroll
          for (int j = 0; j < UNROLL; ++j) {
            const int p = first + j * NORM_THREADS;
            pack o;
            if (p < n8) {
              pack u;
              u.v = packs[p];
#pragma unroll
              for (int k = 0; k < 4; ++k) {
                const float2 f = __half22float2(u.h2[k]);
                const float2 fw = __half22float2(uw[j].h2[k]);
                const float2 fb = __half22float2(ub[j].h2[k]);
                o.h2[k] = __floats2half2_rn(fmaf((f.x - mean) * scale, fw.x, fb.x),
                                            fmaf((f.y - mean) * scale, fw.y, fb.y));
              }
            }
            // uw[j] and ub[j] are used up: refill them for the next group, whether or not
            // this group had a pack j (the next row's first group may have one). Where one
            // group is the whole row, the next row's is this one: they are held, not reloaded.
            const int q = next + j * NORM_THREADS;
            if (q < n8 && q != p) {
              uw[j].v = load_kept(w + q, policy);
              ub[j].v = load_kept(b + q, policy);
            }
            if (p < n8) __stcs(dst + p, o.v);
          }
        }
      } else {
        for (int i = t; i < n; i += NORM_THREADS) {
          const float f = __half2float(data[i]);
          to[i] = __float2half_rn(fmaf((f - mean) * scale, __half2float(weight[begin + i]),
                                       __half2float(bias[begin + i])));
        }
      }
      __syncwarp();
      if (lane == 0) bar_arrive(&empty[s]);
    }
  }
}
