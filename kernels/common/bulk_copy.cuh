// bulk_copy.cuh: rows streamed into shared memory by the copy engine (cp.async.bulk), each copy
// completing on an mbarrier that a consumer waits on. A caller initializes each barrier once
// (mbarrier_init, then fence.mbarrier_init), arms and issues a copy per use (bulk_fetch), and
// waits with the phase parity of that use (mbarrier_wait).
#pragma once

#include "common/shared_memory.cuh"

namespace blaster_common {

// A barrier that one arrival, with the bytes it expects, completes.
__device__ __forceinline__ void mbarrier_init(unsigned long long* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(bar)) : "memory");
}

__device__ __forceinline__ void mbarrier_wait(unsigned long long* bar, unsigned parity) {
  asm volatile(
      "{\n\t.reg .pred done;\n"
      "WAIT:\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n\t"
      "@!done bra WAIT;\n}" ::"r"(shared_address(bar)),
      "r"(parity)
      : "memory");
}

// One bulk copy of `bytes` (positive, a multiple of 16, both addresses 16-byte aligned) into
// shared memory, completing on `bar`; the data is read once, so it leaves the L2 first.
__device__ __forceinline__ void bulk_fetch(unsigned long long* bar, void* to, const void* from,
                                           unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(bar)),
               "r"(bytes)
               : "memory");
  unsigned long long policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1], %2, [%3], %4;" ::"r"(shared_address(to)),
      "l"(from), "r"(bytes), "r"(shared_address(bar)), "l"(policy)
      : "memory");
}

}  // namespace blaster_common
