#include "benchmarking/copy_bandwidth.hpp"

#include <fmt/format.h>

#include "benchmarking/internal_kernel.hpp"
#include "core/cuda_context.hpp"
#include "core/cuda_stream.hpp"
#include "core/device_buffer.hpp"

namespace blaster {
namespace {

constexpr const char* copy_source = R"(
extern "C" __global__ void blaster_copy(const uint4* __restrict__ in, uint4* __restrict__ out,
                                        unsigned long long n) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  // Four independent 16-byte loads in flight per thread before the first store.
  for (; i + 3 * stride < n; i += 4 * stride) {
    const uint4 a = in[i];
    const uint4 b = in[i + stride];
    const uint4 c = in[i + 2 * stride];
    const uint4 d = in[i + 3 * stride];
    out[i] = a;
    out[i + stride] = b;
    out[i + 2 * stride] = c;
    out[i + 3 * stride] = d;
  }
  for (; i < n; i += stride) out[i] = in[i];
}
)";

constexpr std::size_t copy_bytes = std::size_t{1} << 30;  // [bytes] each way, far beyond L2

}  // namespace

copy_bandwidth measure_copy_bandwidth(const cuda::context& context, const cuda::stream& stream,
                                      compile_cache* cache) {
  const internal_kernel kernel(copy_source, "blaster_copy", context.properties().arch(), cache);

  cuda::device_buffer in(copy_bytes);
  cuda::device_buffer out(copy_bytes);
  in.fill_u32(0x3C003C00U, stream.get());  // not zeros: some memory systems move zeros faster
  stream.synchronize();
  unsigned long long vectors = copy_bytes / 16;
  CUdeviceptr in_ptr = in.get();
  CUdeviceptr out_ptr = out.get();
  void* args[] = {&in_ptr, &out_ptr, &vectors};

  copy_bandwidth best;
  const int sms = context.properties().sm_count;
  for (int blocks_per_sm : {2, 4, 8}) {
    for (unsigned threads : {256U, 512U}) {
      const unsigned grid = static_cast<unsigned>(sms * blocks_per_sm);
      const double time_us = kernel.median_launch_us(grid, threads, args, stream);
      const double rate = 2.0 * static_cast<double>(copy_bytes) / (time_us * 1e-6);
      if (rate > best.bytes_per_second) {
        best.bytes_per_second = rate;
        best.bytes_moved = static_cast<std::int64_t>(2 * copy_bytes);
        best.time_us = time_us;
        best.config = fmt::format("grid {} x {}, 4 loads in flight per thread", grid, threads);
      }
    }
  }
  return best;
}

}  // namespace blaster
