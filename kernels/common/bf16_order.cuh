// kernels/common/: headers candidates share, as #include "common/NAME.cuh".
//
// bf16_order.cuh: a bf16 value's 16 bits as a level that unsigned comparison orders as the values
// are ordered, as selections over logits (top-k, top-p) compare them, and back.
#pragma once

namespace blaster_common {

// The higher value, the higher level; -0 takes +0's level, as the two are equal. No finite
// value's level is 0.
__device__ __forceinline__ unsigned bf16_level(unsigned bits) {
  if (bits == 0x8000u) bits = 0u;
  return (bits & 0x8000u) ? (~bits & 0xFFFFu) : (bits | 0x8000u);
}

// The bf16 bits of a level (+0's for the level -0 shares with it).
__device__ __forceinline__ unsigned bf16_of_level(unsigned level) {
  return (level & 0x8000u) ? (level & 0x7FFFu) : (~level & 0xFFFFu);
}

// A key for a selection with ties to the lower position: the value's level in the high half,
// 0xFFFF - position in the low half, so that a larger key is the higher value, or the lower
// position among equal values. Keys of distinct positions (below 65536) differ; 0 is no element.
__device__ __forceinline__ unsigned make_key(unsigned bits, int position) {
  return (bf16_level(bits) << 16) | (0xFFFFu - static_cast<unsigned>(position));
}

}  // namespace blaster_common
