/* blaster
{
  "launch": [
    {"kernel": "rms_norm_chunk_squares<THREADS, CHUNK>", "grid": ["ceil_div(H, CHUNK)", "T"],
     "block": "THREADS", "args": ["partial", "x", "H"]},
    {"kernel": "rms_norm_chunk_scale<THREADS, CHUNK>", "grid": ["ceil_div(H, CHUNK)", "T"],
     "block": "THREADS", "args": ["out", "x", "weight", "partial", "H", "eps"]}
  ],
  "scratch": {"partial": "T * ceil_div(H, CHUNK) * 4"},
  "params": {"THREADS": [256], "CHUNK": [1024]}
}
*/
// Style: a split reduction with a second pass. A row is cut into chunks of CHUNK elements, a
// block per chunk: the first kernel writes each chunk's sum of squares to the declared scratch
// (partial[row][chunk], every entry written before the second kernel runs, in every launch:
// scratch starts as poison and nothing in it is read before this launch wrote it); the second
// has every block of a row add that row's partials in chunk order (the same bits in each block,
// so one scale per row) and scale its own chunk. One element per thread step, so any H and any
// alignment; T is the grid's y (the task's 16384 at most, within its 65535).
#include <cuda_bf16.h>

#include "common/block_reduce.cuh"

using blaster_common::block_sum;

template <int THREADS, int CHUNK>
__global__ void __launch_bounds__(THREADS)
    rms_norm_chunk_squares(float* __restrict__ partial, const __nv_bfloat16* __restrict__ x,
                           int hidden) {
  __shared__ float scratch[THREADS / 32];
  const int chunks = (hidden + CHUNK - 1) / CHUNK;
  const int begin = blockIdx.x * CHUNK;
  const int end = min(hidden, begin + CHUNK);
  const __nv_bfloat16* in = x + static_cast<long long>(blockIdx.y) * hidden;
  float sum = 0.0f;
  for (int j = begin + threadIdx.x; j < end; j += THREADS) {
    const float v = __bfloat162float(in[j]);
    sum = fmaf(v, v, sum);
  }
  const float chunk_sum = block_sum<THREADS>(sum, scratch);
  if (threadIdx.x == 0) partial[static_cast<long long>(blockIdx.y) * chunks + blockIdx.x] = chunk_sum;
}

template <int THREADS, int CHUNK>
__global__ void __launch_bounds__(THREADS)
    rms_norm_chunk_scale(__nv_bfloat16* __restrict__ out, const __nv_bfloat16* __restrict__ x,
                         const __nv_bfloat16* __restrict__ weight,
                         const float* __restrict__ partial, int hidden, float eps) {
  __shared__ float scale;
  const int chunks = (hidden + CHUNK - 1) / CHUNK;
  if (threadIdx.x == 0) {
    const float* row_partial = partial + static_cast<long long>(blockIdx.y) * chunks;
    float sum = 0.0f;
    for (int c = 0; c < chunks; ++c) sum += row_partial[c];
    scale = rsqrtf(sum / hidden + eps);
  }
  __syncthreads();
  const int begin = blockIdx.x * CHUNK;
  const int end = min(hidden, begin + CHUNK);
  const long long start = static_cast<long long>(blockIdx.y) * hidden;
  for (int j = begin + threadIdx.x; j < end; j += THREADS) {
    out[start + j] =
        __float2bfloat16(__bfloat162float(x[start + j]) * scale * __bfloat162float(weight[j]));
  }
}
