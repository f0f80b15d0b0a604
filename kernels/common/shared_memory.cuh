// shared_memory.cuh: a shared-memory pointer as PTX addresses it, and this launch's dynamic
// shared memory size.
#pragma once

namespace blaster_common {

// The 32-bit shared-window address of `p`, which must point into shared memory.
__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// [bytes] the dynamic shared memory this launch got.
__device__ __forceinline__ unsigned dynamic_shared_bytes() {
  unsigned bytes;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
  return bytes;
}

}  // namespace blaster_common
