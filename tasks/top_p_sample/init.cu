/* blaster
{
  "launch": [
    {"kernel": "top_p_sample_naive", "grid": "T", "block": 256,
     "args": ["token", "logits", "u", "V", "p"]}
  ]
}
*/
// The first version a newcomer writes: one block per row, no sort. The tokens' order is their
// logits' (equal logits in id order), so a bf16 logit's 16 bits, made order-preserving, name its
// level: a bisection over the levels finds the one where the nucleus ends, a scan in id order the
// token there; the same again finds the sampled token inside the nucleus. Every step is a full
// pass over the row with a fixed-order block sum.
#include <cuda_bf16.h>

namespace {

constexpr int block = 256;

// A bf16 logit's bits as a key that orders like its value; -0 and +0 are one level.
__device__ unsigned level_of(__nv_bfloat16 x) {
  unsigned bits = __bfloat16_as_ushort(x);
  if (bits == 0x8000U) bits = 0U;
  return (bits & 0x8000U) != 0U ? (~bits & 0xFFFFU) : (bits | 0x8000U);
}

__device__ float block_sum(float v, float* scratch) {
  scratch[threadIdx.x] = v;
  __syncthreads();
  for (int s = block / 2; s > 0; s /= 2) {
    if (static_cast<int>(threadIdx.x) < s) scratch[threadIdx.x] += scratch[threadIdx.x + s];
    __syncthreads();
  }
  const float total = scratch[0];
  __syncthreads();
  return total;
}

// Inclusive prefix sums of v over the block, in thread order.
__device__ float block_scan(float v, float* scratch) {
  scratch[threadIdx.x] = v;
  __syncthreads();
  for (int s = 1; s < block; s *= 2) {
    const float add = static_cast<int>(threadIdx.x) >= s ? scratch[threadIdx.x - s] : 0.0f;
    __syncthreads();
    scratch[threadIdx.x] += add;
    __syncthreads();
  }
  const float prefix = scratch[threadIdx.x];
  __syncthreads();
  return prefix;
}

struct row_view {
  const __nv_bfloat16* logits;
  int vocabulary;
  float top;
  float total;
  // The nucleus: every token above `level`, and those at it up to id `last` (every token when
  // level is 0 and last the vocabulary's end).
  unsigned level;
  int last;

  __device__ float prob(int i) const { return __expf(__bfloat162float(logits[i]) - top) / total; }
  __device__ bool inside(int i, unsigned key) const {
    return key > level || (key == level && i <= last);
  }
  // The nucleus's probability at levels of at least `from`.
  __device__ float mass_from(unsigned from, float* scratch) const {
    float s = 0.0f;
    for (int i = threadIdx.x; i < vocabulary; i += block) {
      const unsigned key = level_of(logits[i]);
      if (key >= from && inside(i, key)) s += prob(i);
    }
    return block_sum(s, scratch);
  }
  // The highest level whose mass from it is at least (reach) / exceeds (!reach) `target`;
  // `floor` where none is.
  __device__ unsigned level_where(float target, bool reach, unsigned floor, float* scratch) const {
    unsigned low = floor;
    unsigned high = 0xFFFFU;
    while (low < high) {
      const unsigned mid = low + (high - low + 1) / 2;
      const float m = mass_from(mid, scratch);
      if (reach ? m >= target : m > target) {
        low = mid;
      } else {
        high = mid - 1;
      }
    }
    return low;
  }
  // In id order, the first token at `key` inside the nucleus at which `above` plus the running
  // sum reaches (reach) / exceeds (!reach) `target`, and that sum; the last such token where none
  // does.
  __device__ int token_at(unsigned key, float above, float target, bool reach, float* sum,
                          float* scratch) const {
    __shared__ int found;
    __shared__ int last_seen;
    if (threadIdx.x == 0) {
      found = vocabulary;  // none yet: above every id, for atomicMin
      last_seen = -1;
    }
    __syncthreads();
    float carried = above;
    for (int base = 0; base < vocabulary; base += block) {
      const int i = base + static_cast<int>(threadIdx.x);
      const bool here = i < vocabulary && level_of(logits[i]) == key && inside(i, key);
      const float running = carried + block_scan(here ? prob(i) : 0.0f, scratch);
      if (here && (reach ? running >= target : running > target)) atomicMin(&found, i);
      if (here) atomicMax(&last_seen, i);
      __syncthreads();
      if (found == i) *sum = running;  // the crossing token's own sum
      carried = block_sum(here ? prob(i) : 0.0f, scratch) + carried;
      if (found < vocabulary) break;
    }
    // Rounding can leave the whole level short of the target: its last token, and its sum.
    if (found == vocabulary && threadIdx.x == 0) *sum = carried;
    __syncthreads();
    const int chosen = found < vocabulary ? found : last_seen;
    __syncthreads();
    return chosen;
  }
};

}  // namespace

extern "C" __global__ void top_p_sample_naive(int* token, const __nv_bfloat16* logits,
                                              const float* u, int vocabulary, float p) {
  __shared__ float scratch[block];
  __shared__ float crossing;
  // Every token is inside until the nucleus is known: the lowest level, up to the last id.
  row_view row{logits + static_cast<long long>(blockIdx.x) * vocabulary, vocabulary,
               -__int_as_float(0x7f800000), 1.0f, 0U, vocabulary};
  float top = row.top;
  for (int i = threadIdx.x; i < vocabulary; i += block) {
    top = fmaxf(top, __bfloat162float(row.logits[i]));
  }
  scratch[threadIdx.x] = top;
  __syncthreads();
  for (int s = block / 2; s > 0; s /= 2) {
    if (static_cast<int>(threadIdx.x) < s) {
      scratch[threadIdx.x] = fmaxf(scratch[threadIdx.x], scratch[threadIdx.x + s]);
    }
    __syncthreads();
  }
  row.top = scratch[0];
  __syncthreads();
  float total = 0.0f;
  for (int i = threadIdx.x; i < vocabulary; i += block) {
    total += __expf(__bfloat162float(row.logits[i]) - row.top);
  }
  row.total = block_sum(total, scratch);

  // The nucleus ends at the level whose mass from it first reaches p, at the token there that
  // makes the running sum reach it.
  const unsigned nucleus_level = row.level_where(p, true, 0U, scratch);
  const float above = nucleus_level < 0xFFFFU ? row.mass_from(nucleus_level + 1, scratch) : 0.0f;
  if (threadIdx.x == 0) crossing = above;
  __syncthreads();
  const int last = row.token_at(nucleus_level, above, p, true, &crossing, scratch);
  __syncthreads();
  const float mass = crossing;
  row.level = nucleus_level;
  row.last = last;

  // The sample: the first token of the nucleus where the running sum exceeds u * mass.
  const float threshold = u[blockIdx.x] * mass;
  const unsigned level = row.level_where(threshold, false, nucleus_level, scratch);
  const float before = level < 0xFFFFU ? row.mass_from(level + 1, scratch) : 0.0f;
  float unused = 0.0f;
  const int chosen = row.token_at(level, before, threshold, false, &unused, scratch);
  if (threadIdx.x == 0) token[blockIdx.x] = chosen;
}
