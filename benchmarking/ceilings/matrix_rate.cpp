#include "benchmarking/ceilings/matrix_rate.hpp"

#include <fmt/format.h>

#include "benchmarking/timing/internal_kernel.hpp"
#include "core/cuda_context.hpp"
#include "core/cuda_stream.hpp"
#include "core/device_buffer.hpp"

namespace blaster {
namespace {

constexpr int chains = 8;  // independent accumulators per warp, to cover the mma latency

constexpr const char* mma_source = R"(
extern "C" __global__ void blaster_mma(float* out, int iterations) {
  // Operands vary by thread so that nothing folds at compile time; their values do not matter.
  unsigned a0 = 0x3C003C00u ^ threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3;
  unsigned b0 = 0x3C003C00u ^ (threadIdx.x << 1), b1 = b0 + 1;
  float c[8][4] = {};
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
          "{%8,%9}, {%0,%1,%2,%3};"
          : "+f"(c[k][0]), "+f"(c[k][1]), "+f"(c[k][2]), "+f"(c[k][3])
          : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
  }
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < 8; ++k) sum += c[k][0] + c[k][1] + c[k][2] + c[k][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;  // keeps the chains alive
}
)";

constexpr int iterations = 2048;
constexpr double flops_per_mma = 2.0 * 16 * 8 * 16;

}  // namespace

matrix_rate measure_matrix_rate(const cuda::context& context, const cuda::stream& stream,
                                compile_cache* cache) {
  const internal_kernel kernel(mma_source, "blaster_mma", context.properties().arch(), cache);
  const int sms = context.properties().sm_count;
  constexpr unsigned most_threads = 1024;
  cuda::device_buffer out(static_cast<std::size_t>(sms) * 4 * most_threads * sizeof(float));
  CUdeviceptr out_ptr = out.get();
  int count = iterations;
  void* args[] = {&out_ptr, &count};

  matrix_rate best;
  for (int blocks_per_sm : {1, 2, 4}) {
    for (unsigned threads : {256U, 512U}) {
      const unsigned grid = static_cast<unsigned>(sms * blocks_per_sm);
      const double time_us = kernel.median_launch_us(grid, threads, args, stream);
      const double warps = static_cast<double>(grid) * threads / 32.0;
      const double flops = warps * iterations * chains * flops_per_mma;
      const double rate = flops / (time_us * 1e-6);
      if (rate > best.flops_per_second) {
        best.flops_per_second = rate;
        best.time_us = time_us;
        best.config = fmt::format("mma.sync m16n8k16 f16->f32, grid {} x {}, {} chains per warp",
                                  grid, threads, chains);
      }
    }
  }
  return best;
}

}  // namespace blaster
