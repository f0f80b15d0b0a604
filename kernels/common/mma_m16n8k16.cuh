// mma_m16n8k16.cuh: one warp-wide f16 (or bf16) matrix product step on the tensor cores
// (mma.sync m16n8k16, f32 accumulation) and the packing of its f16 operand and result registers.
#pragma once

#include <cuda_fp16.h>

namespace blaster_common {

// The same step on bf16 operands, in the same register layout.
__device__ __forceinline__ void mma_16816_bf16(float (&c)[4], unsigned a0, unsigned a1,
                                               unsigned a2, unsigned a3, unsigned b0,
                                               unsigned b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
      "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// Two halves in one 32-bit register, `lo` in the low 16 bits: an mma operand.
__device__ __forceinline__ unsigned pack_half2(__half lo, __half hi) {
  const __half2 h = __halves2half2(lo, hi);
  return *reinterpret_cast<const unsigned*>(&h);
}

// Two floats rounded to halves in one register: a result ready for a 32-bit store.
__device__ __forceinline__ unsigned pack_float2(float lo, float hi) {
  const __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<const unsigned*>(&h);
}

// c += a (16x16, row-major fragment a0..a3) * b (16x8, column-major fragment b0, b1), in the
// register layout PTX gives mma.m16n8k16. Every lane of the warp must call it.
__device__ __forceinline__ void mma_16816(float (&c)[4], unsigned a0, unsigned a1, unsigned a2,
                                          unsigned a3, unsigned b0, unsigned b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

}  // namespace blaster_common
