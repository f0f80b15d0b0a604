/* blaster
{
  "launch": [
    {"kernel": "embedding_gather_aligned_packs<THREADS>", "grid": "T", "block": "THREADS",
     "args": ["out", "ids", "table", "H"]}
  ],
  "params": {"THREADS": [128]}
}
*/
// Style: vectorized. A block per token copies its row in 16-byte packs wherever the source row
// and the destination row sit at the same offset within 16 bytes, which a run-time check of
// the two addresses decides (always, where H is a multiple of 8 and the buffers aligned;
// for other H it depends on the token and its id): the elements before the first 16-byte
// boundary one by one, then whole packs, then the tail of fewer than 8 one by one. Rows whose
// offsets differ go one element at a time. Every element of the row falls in exactly one of
// head, packs and tail, so each is written once.
#include <cuda_bf16.h>

template <int THREADS>
__global__ void __launch_bounds__(THREADS)
    embedding_gather_aligned_packs(__nv_bfloat16* __restrict__ out, const int* __restrict__ ids,
                                   const __nv_bfloat16* __restrict__ table, int hidden) {
  static_assert(THREADS >= 8, "the head's up to 7 elements take a thread each");
  const __nv_bfloat16* from = table + static_cast<long long>(ids[blockIdx.x]) * hidden;
  __nv_bfloat16* to = out + static_cast<long long>(blockIdx.x) * hidden;
  const auto src = reinterpret_cast<unsigned long long>(from);
  const auto dst = reinterpret_cast<unsigned long long>(to);
  if (((src ^ dst) % 16) != 0) {
    for (int j = threadIdx.x; j < hidden; j += THREADS) to[j] = from[j];
    return;
  }
  // dst is 2-byte aligned, so the head is 0 to 7 elements.
  const int head = min(hidden, static_cast<int>((16 - dst % 16) % 16 / 2));
  const int packs = (hidden - head) / 8;
  const int tail = head + packs * 8;
  if (static_cast<int>(threadIdx.x) < head) to[threadIdx.x] = from[threadIdx.x];
  const uint4* src_packs = reinterpret_cast<const uint4*>(from + head);
  uint4* dst_packs = reinterpret_cast<uint4*>(to + head);
  for (int p = threadIdx.x; p < packs; p += THREADS) dst_packs[p] = __ldg(src_packs + p);
  for (int j = tail + threadIdx.x; j < hidden; j += THREADS) to[j] = from[j];
}
