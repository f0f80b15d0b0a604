// The driver wrappers on a real device: memory round trips, poison fills, and the parameter
// sizes the driver reports agreeing with what blaster reads from the PTX without a GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "benchmarking/timing/pattern_fill.hpp"
#include "benchmarking/timing/stream_hold.hpp"
#include "core/cuda_context.hpp"
#include "core/cuda_module.hpp"
#include "core/cuda_stream.hpp"
#include "core/device_buffer.hpp"
#include "core/dtype.hpp"
#include "core/nvrtc_compiler.hpp"
#include "gpu/require_gpu.hpp"
#include "profiling/resource_report.hpp"

namespace blaster {
namespace {

TEST(CudaObjectsGpu, BufferRoundTripAndPoisonFill) {
  BLASTER_REQUIRE_GPU();
  cuda::context context;
  EXPECT_GT(context.properties().sm_count, 0);
  std::vector<std::int32_t> host(1000);
  std::iota(host.begin(), host.end(), -500);
  cuda::device_buffer buffer(host.size() * sizeof(std::int32_t));
  buffer.upload(std::as_bytes(std::span(host)));
  std::vector<std::int32_t> back(host.size());
  buffer.download(std::as_writable_bytes(std::span(back)));
  EXPECT_EQ(back, host);

  buffer.fill_u16(static_cast<unsigned short>(poison_pattern(dtype::f16, 42) & 0xFFFFU));
  std::vector<std::byte> bytes(buffer.bytes());
  buffer.download(bytes);
  for (std::size_t i = 0; i < bytes.size(); i += 2) {
    ASSERT_TRUE(is_poison(dtype::f16, poison_pattern(dtype::f16, 42), bytes.data() + i))
        << "element " << i / 2;
  }
}

// The harness's fill kernel writes what a memset of the poison's width writes, to the last byte
// of a size that is no multiple of four, and nothing past it.
TEST(CudaObjectsGpu, ThePatternFillWritesWhatAMemsetWould) {
  BLASTER_REQUIRE_GPU();
  cuda::context context;
  const cuda::stream stream;
  const pattern_fill fill(context.properties().arch(), nullptr);
  constexpr std::size_t bytes = 4 * 100'003 + 3;
  cuda::device_buffer buffer(bytes + 5);
  buffer.fill_u8(0x5A);
  const std::uint32_t pattern = poison_pattern(dtype::f16, 42);
  fill(buffer.get(), bytes, repeated_word(pattern, 2), stream.get());
  stream.synchronize();
  std::vector<std::byte> back(bytes + 5);
  buffer.download(back);
  for (std::size_t i = 0; i + 1 < bytes; i += 2) {
    ASSERT_TRUE(is_poison(dtype::f16, pattern, back.data() + i)) << "element " << i / 2;
  }
  EXPECT_EQ(back[bytes - 1], static_cast<std::byte>(pattern & 0xFFU)) << "the tail's last byte";
  for (std::size_t i = bytes; i < back.size(); ++i) {
    EXPECT_EQ(back[i], std::byte{0x5A}) << "byte " << i << " past the end";
  }
}

// The stream hold keeps what is enqueued behind it waiting for as long as it was asked to, so
// that launches enqueued meanwhile then run back to back.
TEST(CudaObjectsGpu, TheStreamHoldKeepsTheStreamForItsTime) {
  BLASTER_REQUIRE_GPU();
  cuda::context context;
  const cuda::stream stream;
  const stream_hold hold(context.properties().arch(), nullptr);
  cuda::event start;
  cuda::event stop;
  start.record(stream);
  hold(300.0, stream.get());
  stop.record(stream);
  const double us = 1000.0 * static_cast<double>(cuda::elapsed_ms(start, stop));
  EXPECT_GE(us, 300.0);
  EXPECT_LT(us, 1000.0);
}

TEST(CudaObjectsGpu, DriverParameterSizesMatchThePtx) {
  BLASTER_REQUIRE_GPU();
  cuda::context context;
  compile_request request;
  request.source = R"(
struct pair { float a; double b; };
template <int N> __global__ void k(float* out, const double* in, int n, float eps, pair p,
                                   long long q, short s) {
  if (n > N) out[0] = static_cast<float>(in[0] * eps * p.a * p.b * q * s);
})";
  request.file_name = "sizes.cu";
  request.arch = context.properties().arch();
  request.name_expressions = {"k<3>"};
  const compile_output out = compile(request);
  ASSERT_TRUE(out.ok) << out.log;
  const std::string& lowered = out.lowered_names.at("k<3>");
  const auto from_ptx = parse_ptx_parameters(out.ptx).at(lowered);

  const cuda::module module(out.cubin);
  const auto from_driver = cuda::parameter_sizes(module.function(lowered));
  ASSERT_EQ(from_driver.size(), from_ptx.size());
  for (std::size_t i = 0; i < from_driver.size(); ++i) {
    EXPECT_EQ(from_driver[i], from_ptx[i].bytes) << "parameter " << i;
  }
  EXPECT_EQ(from_driver, (std::vector<std::size_t>{8, 8, 4, 4, 16, 8, 2}));
}

}  // namespace
}  // namespace blaster
