// moments.cuh: the count, mean and sum of squared deviations of a part of a row, merged with
// Chan's pairwise formula, so that parts reduced in any grouping combine exactly once.
#pragma once

namespace blaster_common {

struct moments {
  float count;
  float mean;
  float m2;
};

// An empty side leaves the other as it is.
__device__ moments merge(moments a, moments b) {
  if (b.count == 0.0f) return a;
  if (a.count == 0.0f) return b;
  const float total = a.count + b.count;
  const float delta = b.mean - a.mean;
  return {total, a.mean + delta * (b.count / total),
          a.m2 + b.m2 + delta * delta * (a.count * b.count / total)};
}

// Lane 0 ends with the merge of all 32 lanes, in a fixed order.
__device__ moments warp_fold(moments m) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    const moments other = {__shfl_down_sync(0xffffffffu, m.count, offset),
                           __shfl_down_sync(0xffffffffu, m.mean, offset),
                           __shfl_down_sync(0xffffffffu, m.m2, offset)};
    if (lane + offset < 32) m = merge(m, other);
  }
  return m;
}

}  // namespace blaster_common
