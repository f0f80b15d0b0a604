/* blaster
{
  "launch": [
    {"kernel": "decode_attention_naive", "grid": "B*QH", "block": 128,
     "args": ["out", "q", "k_cache", "v_cache", "block_table", "seq_lens", "scores", "QH", "KH",
              "D", "BS", "MAXB", "C", "scale"]}
  ],
  "scratch": {"scores": "B*QH*C * 4"}
}
*/
// The first version a newcomer writes: one block per sequence and query head, three passes over
// the context: each thread's tokens' scores into scratch and their max, then the weights and
// their sum, then one output element per thread summed over every token's value.
#include <cuda_bf16.h>

constexpr int threads = 128;

// The block's combined value of v under op, in every thread.
template <typename Op>
__device__ float block_reduce(float v, float* shared, Op op) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int half = threads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) shared[threadIdx.x] = op(shared[threadIdx.x], shared[threadIdx.x + half]);
    __syncthreads();
  }
  const float total = shared[0];
  __syncthreads();
  return total;
}

extern "C" __global__ void __launch_bounds__(threads)
    decode_attention_naive(__nv_bfloat16* out, const __nv_bfloat16* q,
                           const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache,
                           const int* block_table, const int* seq_lens, float* scores,
                           int q_heads, int kv_heads, int dim, int block_size, int max_blocks,
                           int context, float scale) {
  __shared__ float shared[threads];
  const int b = blockIdx.x / q_heads;
  const int kv_head = blockIdx.x % q_heads / (q_heads / kv_heads);
  const int length = seq_lens[b];
  const __nv_bfloat16* query = q + static_cast<long long>(blockIdx.x) * dim;
  float* score = scores + static_cast<long long>(blockIdx.x) * context;
  __nv_bfloat16* o = out + static_cast<long long>(blockIdx.x) * dim;
  auto row = [&](int t) {
    const long long block = block_table[static_cast<long long>(b) * max_blocks + t / block_size];
    return ((block * block_size + t % block_size) * kv_heads + kv_head) * dim;
  };

  float top = __int_as_float(0xff800000);  // -infinity
  for (int t = threadIdx.x; t < length; t += threads) {
    const __nv_bfloat16* key = k_cache + row(t);
    float dot = 0.0f;
    for (int d = 0; d < dim; ++d) dot += __bfloat162float(query[d]) * __bfloat162float(key[d]);
    score[t] = dot * scale;
    top = fmaxf(top, dot * scale);
  }
  top = block_reduce(top, shared, [](float a, float b) { return fmaxf(a, b); });

  float sum = 0.0f;
  for (int t = threadIdx.x; t < length; t += threads) {
    const float weight = expf(score[t] - top);
    score[t] = weight;
    sum += weight;
  }
  sum = block_reduce(sum, shared, [](float a, float b) { return a + b; });
  __syncthreads();  // every weight is in scratch before any thread reads another's

  for (int d = threadIdx.x; d < dim; d += threads) {
    float acc = 0.0f;
    for (int t = 0; t < length; ++t) acc += score[t] * __bfloat162float(v_cache[row(t) + d]);
    // A sequence of length 0 attends to nothing: zeros, not 0 / 0.
    o[d] = __float2bfloat16(length > 0 ? acc / sum : 0.0f);
  }
}
