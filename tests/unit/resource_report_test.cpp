#include "profiling/resource_report.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/nvrtc_compiler.hpp"

namespace blaster {
namespace {

// NVRTC's log for two kernels (from a real sm_90a compile), then a third kernel with spills
// and one that reports no barriers, as older ptxas versions print it.
constexpr std::string_view ptxas_log =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function '_Z1kILi4EEvP6__halfPKS0_if' for 'sm_90a'\n"
    "ptxas info    : Function properties for _Z1kILi4EEvP6__halfPKS0_if\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 10 registers, used 0 barriers\n"
    "ptxas info    : Compile time = 13.871 ms\n"
    "ptxas info    : Compiling entry function 'plain' for 'sm_90a'\n"
    "ptxas info    : Function properties for plain\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 10 registers, used 1 barriers, 256 bytes smem\n"
    "ptxas info    : Compile time = 2.260 ms\n"
    "ptxas info    : Compiling entry function 'spills' for 'sm_90a'\n"
    "ptxas info    : Function properties for spills\n"
    "ptxas         .     24 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
    "ptxas info    : Used 255 registers, used 2 barriers, 49152 bytes smem, 384 bytes cmem[0]\n"
    "ptxas info    : Compile time = 40.5 ms\n"
    "ptxas info    : Compiling entry function 'old' for 'sm_80'\n"
    "ptxas info    : Used 32 registers, 8 bytes smem, 368 bytes cmem[0]\n";

TEST(PtxasLog, OneEntryPerKernelInCompileOrder) {
  const auto kernels = parse_ptxas_log(ptxas_log);
  ASSERT_EQ(kernels.size(), 4u);

  const kernel_resources& k = kernels[0];
  EXPECT_EQ(k.lowered_name, "_Z1kILi4EEvP6__halfPKS0_if");
  EXPECT_EQ(k.registers, 10);
  EXPECT_EQ(k.barriers, 0);
  EXPECT_EQ(k.stack_bytes, 0);
  EXPECT_EQ(k.spill_store_bytes, 0);
  EXPECT_EQ(k.spill_load_bytes, 0);
  EXPECT_EQ(k.shared_bytes, 0);  // absent from the log when zero

  const kernel_resources& plain = kernels[1];
  EXPECT_EQ(plain.lowered_name, "plain");
  EXPECT_EQ(plain.registers, 10);
  EXPECT_EQ(plain.barriers, 1);
  EXPECT_EQ(plain.shared_bytes, 256);
  EXPECT_EQ(plain.stack_bytes, 0);

  const kernel_resources& spills = kernels[2];
  EXPECT_EQ(spills.lowered_name, "spills");
  EXPECT_EQ(spills.registers, 255);
  EXPECT_EQ(spills.barriers, 2);
  EXPECT_EQ(spills.stack_bytes, 24);
  EXPECT_EQ(spills.spill_store_bytes, 8);
  EXPECT_EQ(spills.spill_load_bytes, 12);
  EXPECT_EQ(spills.shared_bytes, 49152);  // cmem is constant memory, not shared

  // No properties line and no barrier count: those stay unknown (-1), not zero.
  const kernel_resources& old = kernels[3];
  EXPECT_EQ(old.lowered_name, "old");
  EXPECT_EQ(old.registers, 32);
  EXPECT_EQ(old.barriers, -1);
  EXPECT_EQ(old.stack_bytes, -1);
  EXPECT_EQ(old.spill_store_bytes, -1);
  EXPECT_EQ(old.shared_bytes, 8);
}

TEST(PtxasLog, NoKernelsInALogWithoutEntries) {
  EXPECT_TRUE(parse_ptxas_log("").empty());
  EXPECT_TRUE(parse_ptxas_log("ptxas info    : 0 bytes gmem\n"
                              "ptxas info    : Used 10 registers, used 0 barriers\n")
                  .empty());
  // A compile error's log has no resource lines at all.
  EXPECT_TRUE(parse_ptxas_log("k.cu(2): error: identifier \"x\" is undefined\n").empty());
}

TEST(PtxasLog, RealCompileReportsEachKernel) {
  compile_request r;
  r.file_name = "two.cu";
  r.source =
      "extern \"C\" __global__ void copy(float* out, const float* in) {\n"
      "  out[threadIdx.x] = in[threadIdx.x];\n"
      "}\n"
      "extern \"C\" __global__ void reverse(float* out) {\n"
      "  __shared__ float tile[64];\n"
      "  tile[threadIdx.x] = out[threadIdx.x];\n"
      "  __syncthreads();\n"
      "  out[threadIdx.x] = tile[63 - threadIdx.x];\n"
      "}\n";
  r.name_expressions = {"copy", "reverse"};
  const compile_output out = compile(r);
  ASSERT_TRUE(out.ok) << out.log;
  const auto kernels = parse_ptxas_log(out.log);
  ASSERT_EQ(kernels.size(), 2u) << out.log;
  for (const auto& k : kernels) {
    EXPECT_TRUE(k.lowered_name == "copy" || k.lowered_name == "reverse") << k.lowered_name;
    EXPECT_GT(k.registers, 0) << k.lowered_name;
    EXPECT_EQ(k.stack_bytes, 0) << k.lowered_name;
    EXPECT_EQ(k.shared_bytes, k.lowered_name == "reverse" ? 256 : 0) << k.lowered_name;
    EXPECT_EQ(k.barriers, k.lowered_name == "reverse" ? 1 : 0) << k.lowered_name;
  }
}

TEST(PtxasLog, DeviceFunctionIsNotAKernel) {
  // ptxas also prints "Function properties" for a __noinline__ device function; the result is
  // documented as one entry per kernel.
  compile_request r;
  r.file_name = "calls.cu";
  r.source =
      "__device__ __noinline__ float square(float a) { return a * a; }\n"
      "extern \"C\" __global__ void k(float* out) { out[threadIdx.x] = square(out[0]); }\n";
  r.name_expressions = {"k"};
  const compile_output out = compile(r);
  ASSERT_TRUE(out.ok) << out.log;
  const auto kernels = parse_ptxas_log(out.log);
  std::vector<std::string> names;
  for (const auto& k : kernels) names.push_back(k.lowered_name);
  EXPECT_EQ(names, std::vector<std::string>{"k"}) << out.log;
  ASSERT_FALSE(kernels.empty());
  EXPECT_GT(kernels[0].registers, 0);
}

// Two entries written the way NVRTC writes them, with the parameter forms it uses.
constexpr std::string_view ptx_module = R"(
.version 8.8
.target sm_90a
.address_size 64

.visible .entry first(
	.param .u64 first_param_0,
	.param .u32 first_param_1,
	.param .f32 first_param_2,
	.param .u16 first_param_3,
	.param .align 8 .b8 first_param_4[16]
)
{
	ret;
}

.visible .entry second(
	.param .u64 .ptr .align 1 second_param_0,
	.param .f64 second_param_1,
	.param .s32 second_param_2
)
{
	ret;
}

.visible .entry none()
{
	ret;
}
)";

TEST(PtxParameters, SizesAndKindsOfEveryEntry) {
  const auto entries = parse_ptx_parameters(ptx_module);
  ASSERT_EQ(entries.size(), 3u);

  const auto& first = entries.at("first");
  ASSERT_EQ(first.size(), 5u);
  const std::vector<std::size_t> first_bytes = {8, 4, 4, 2, 16};
  const std::string first_kinds = "uufub";
  for (std::size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].bytes, first_bytes[i]) << i;
    EXPECT_EQ(first[i].kind, first_kinds[i]) << i;
  }

  const auto& second = entries.at("second");
  ASSERT_EQ(second.size(), 3u);
  EXPECT_EQ(second[0].bytes, 8u);  // the .ptr and .align qualifiers change nothing
  EXPECT_EQ(second[0].kind, 'u');
  EXPECT_EQ(second[1].bytes, 8u);
  EXPECT_EQ(second[1].kind, 'f');
  EXPECT_EQ(second[2].bytes, 4u);
  EXPECT_EQ(second[2].kind, 's');

  EXPECT_TRUE(entries.at("none").empty());
}

TEST(PtxParameters, RealPtxOfACompiledKernel) {
  compile_request r;
  r.file_name = "axpy.cu";
  r.source =
      "struct pair { double a; int b; };\n"
      "extern \"C\" __global__ void axpy(float* y, const float* x, int n, float a) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) y[i] += a * x[i];\n"
      "}\n"
      "template <int N>\n"
      "__global__ void by_value(pair p, double* out) { out[N] = p.a + p.b; }\n";
  r.name_expressions = {"axpy", "by_value<3>"};
  const compile_output out = compile(r);
  ASSERT_TRUE(out.ok) << out.log;
  const auto entries = parse_ptx_parameters(out.ptx);

  ASSERT_TRUE(entries.contains("axpy")) << out.ptx;
  const auto& axpy = entries.at("axpy");
  ASSERT_EQ(axpy.size(), 4u) << out.ptx;
  const std::vector<std::size_t> bytes = {8, 8, 4, 4};
  for (std::size_t i = 0; i < axpy.size(); ++i) EXPECT_EQ(axpy[i].bytes, bytes[i]) << i;
  EXPECT_NE(axpy[2].kind, 'f');
  EXPECT_EQ(axpy[3].kind, 'f');

  // A struct by value is an aligned byte array of its size.
  const std::string lowered = out.lowered_names.at("by_value<3>");
  ASSERT_TRUE(entries.contains(lowered)) << out.ptx;
  const auto& by_value = entries.at(lowered);
  ASSERT_EQ(by_value.size(), 2u) << out.ptx;
  EXPECT_EQ(by_value[0].bytes, 16u);
  EXPECT_EQ(by_value[0].kind, 'b');
  EXPECT_EQ(by_value[1].bytes, 8u);
}

}  // namespace
}  // namespace blaster
