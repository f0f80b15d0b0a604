// cluster.cuh: a block's place in its thread-block cluster (sm_90), the cluster's barrier, and
// reads of another block's shared memory through distributed shared memory. A block may read
// another's shared memory only while that block has not exited: a caller ends with a cluster
// barrier after its last remote read.
#pragma once

#include "common/shared_memory.cuh"

namespace blaster_common {

// This block's rank in its cluster, 0 to the cluster's size - 1.
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}

// The cluster barrier in two halves: arrive releases this thread's writes, wait acquires every
// other thread's that arrived before it. Every thread of every block of the cluster takes part.
__device__ __forceinline__ void cluster_arrive() {
  asm volatile("barrier.cluster.arrive.release;" ::: "memory");
}
__device__ __forceinline__ void cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire;" ::: "memory");
}

// The address, in the cluster's shared window, of `local` (in this block's shared memory) as
// block `rank` of the cluster holds it.
__device__ __forceinline__ unsigned cluster_address(const void* local, unsigned rank) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
               : "=r"(remote)
               : "r"(shared_address(local)), "r"(rank));
  return remote;
}

// Reads the float2 that block `rank` keeps where this block keeps `local` (8-byte aligned).
__device__ __forceinline__ float2 load_remote_float2(const float2* local, unsigned rank) {
  float2 v;
  asm volatile("ld.shared::cluster.v2.f32 {%0, %1}, [%2];"
               : "=f"(v.x), "=f"(v.y)
               : "r"(cluster_address(local, rank))
               : "memory");
  return v;
}

// Reads the float that block `rank` keeps where this block keeps `local`.
__device__ __forceinline__ float load_remote_float(const float* local, unsigned rank) {
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];"
               : "=f"(v)
               : "r"(cluster_address(local, rank))
               : "memory");
  return v;
}

}  // namespace blaster_common
