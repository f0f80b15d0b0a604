/* blaster
{
  "launch": [
    {"kernel": "rmsnorm_vec_regs<VEC, BLOCK, 64>", "grid": "ceil_div(B*H*W, BLOCK*VEC)",
     "block": "BLOCK", "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ],
  "params": {"VEC": [4, 2], "BLOCK": [128, 256]}
}
*/
// One pass over memory: each thread owns VEC adjacent positions, loads every channel of them
// with one VEC*2-byte access per channel into registers, reduces, and writes from registers,
// so x is read once. Channels beyond CMAX fall back to re-reading x.
#include <cuda_fp16.h>

template <int VEC>
struct alignas(2 * VEC) half_pack {
  __half2 h[VEC / 2];
};

template <int VEC, int BLOCK, int CMAX>
__global__ void __launch_bounds__(BLOCK)
    rmsnorm_vec_regs(__half* __restrict__ out, const __half* __restrict__ x, int batches,
                     int channels, int plane, float eps) {
  using pack = half_pack<VEC>;
  const long long group = static_cast<long long>(blockIdx.x) * BLOCK + threadIdx.x;
  const long long positions = static_cast<long long>(batches) * plane;
  if (group * VEC >= positions) return;

  if (plane % VEC != 0) {
    // Rows are not VEC-aligned: the same math, one position at a time.
    for (int j = 0; j < VEC; ++j) {
      const long long position = group * VEC + j;
      if (position >= positions) return;
      const long long base = (position / plane) * channels * plane + position % plane;
      float sum = 0.0f;
      for (int c = 0; c < channels; ++c) {
        const float v = __half2float(x[base + static_cast<long long>(c) * plane]);
        sum += v * v;
      }
      const float scale = rsqrtf(sum / channels + eps);
      for (int c = 0; c < channels; ++c) {
        const long long i = base + static_cast<long long>(c) * plane;
        out[i] = __float2half(__half2float(x[i]) * scale);
      }
    }
    return;
  }

  const long long first = group * VEC;
  const long long base = (first / plane) * channels * plane + first % plane;
  const pack* in = reinterpret_cast<const pack*>(x + base);
  pack* to = reinterpret_cast<pack*>(out + base);
  const long long stride = plane / VEC;  // one channel further, in packs

  float sum[VEC];
#pragma unroll
  for (int j = 0; j < VEC; ++j) sum[j] = 0.0f;

  if (channels <= CMAX) {
    pack v[CMAX];
#pragma unroll
    for (int c = 0; c < CMAX; ++c) {
      if (c < channels) v[c] = in[c * stride];
    }
#pragma unroll
    for (int c = 0; c < CMAX; ++c) {
      if (c < channels) {
#pragma unroll
        for (int k = 0; k < VEC / 2; ++k) {
          const float2 f = __half22float2(v[c].h[k]);
          sum[2 * k] += f.x * f.x;
          sum[2 * k + 1] += f.y * f.y;
        }
      }
    }
    float scale[VEC];
#pragma unroll
    for (int j = 0; j < VEC; ++j) scale[j] = rsqrtf(sum[j] / channels + eps);
#pragma unroll
    for (int c = 0; c < CMAX; ++c) {
      if (c < channels) {
        pack r;
#pragma unroll
        for (int k = 0; k < VEC / 2; ++k) {
          const float2 f = __half22float2(v[c].h[k]);
          r.h[k] = __floats2half2_rn(f.x * scale[2 * k], f.y * scale[2 * k + 1]);
        }
        to[c * stride] = r;
      }
    }
    return;
  }

  for (int c = 0; c < channels; ++c) {
    const pack v = in[c * stride];
#pragma unroll
    for (int k = 0; k < VEC / 2; ++k) {
      const float2 f = __half22float2(v.h[k]);
      sum[2 * k] += f.x * f.x;
      sum[2 * k + 1] += f.y * f.y;
    }
  }
  float scale[VEC];
#pragma unroll
  for (int j = 0; j < VEC; ++j) scale[j] = rsqrtf(sum[j] / channels + eps);
  for (int c = 0; c < channels; ++c) {
    const pack v = in[c * stride];
    pack r;
#pragma unroll
    for (int k = 0; k < VEC / 2; ++k) {
      const float2 f = __half22float2(v.h[k]);
      r.h[k] = __floats2half2_rn(f.x * scale[2 * k], f.y * scale[2 * k + 1]);
    }
    to[c * stride] = r;
  }
}
