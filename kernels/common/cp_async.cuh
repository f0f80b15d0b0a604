// kernels/common/: headers candidates share, as #include "common/NAME.cuh".
//
// cp_async.cuh: 16-byte copies from global to shared memory that bypass the registers
// (cp.async, sm_80 and later), in groups a thread commits and waits for. The memory clobbers keep
// each read of a tile after the wait (and the barrier) that make it visible.
#pragma once

namespace blaster_common {

// 16 bytes global -> shared at a shared-memory address; src_bytes 0 writes 16 zero bytes and
// reads nothing (a tile's padding past the end of its rows).
__device__ __forceinline__ void cp_async_16(unsigned dst, const void* src, unsigned src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(src_bytes)
               : "memory");
}

// The same, every byte read, and the L2 asked for the whole 256-byte line: the neighbouring
// copies of the warp ask for its other sectors next.
__device__ __forceinline__ void cp_async_16_line(unsigned dst, const void* src) {
  asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;" ::"r"(dst), "l"(src)
               : "memory");
}

// Closes this thread's group of copies issued since the last commit.
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}

// Waits until at most PENDING of this thread's groups are in flight.
template <int PENDING>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(PENDING) : "memory");
}

}  // namespace blaster_common
