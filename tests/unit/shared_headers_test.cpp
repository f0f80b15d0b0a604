// kernels/common/: a candidate that includes shared headers compiles with them, and their bytes
// enter the compile key, the sources digest and the store, so a changed header is a changed
// candidate.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "benchmarking/candidate/candidate.hpp"
#include "benchmarking/runner/bench_runner.hpp"
#include "core/cas_store.hpp"
#include "core/file_io.hpp"
#include "core/sha256.hpp"
#include "evidence/store.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;

const fs::path source_root = BLASTER_SOURCE_DIR;

// rmsnorm with one block per (b, h, w) position reducing over the channels with
// blaster_common::block_sum.
constexpr std::string_view block_rmsnorm = R"(/* blaster
{
  "launch": [
    {"kernel": "rmsnorm_block<128>", "grid": "B*H*W", "block": 128,
     "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ]
}
*/
#include <cuda_fp16.h>
#include "common/block_reduce.cuh"

template <int BLOCK>
__global__ void rmsnorm_block(__half* out, const __half* x, int batches, int channels, int plane,
                              float eps) {
  __shared__ float scratch[BLOCK / 32];
  const long long position = blockIdx.x;
  const long long base = (position / plane) * channels * plane + position % plane;
  float sum = 0.0f;
  for (int c = threadIdx.x; c < channels; c += BLOCK) {
    const float v = __half2float(x[base + static_cast<long long>(c) * plane]);
    sum += v * v;
  }
  const float scale = rsqrtf(blaster_common::block_sum<BLOCK>(sum, scratch) / channels + eps);
  for (int c = threadIdx.x; c < channels; c += BLOCK) {
    const long long i = base + static_cast<long long>(c) * plane;
    out[i] = __float2half(__half2float(x[i]) * scale);
  }
}
)";

class SharedHeaders : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           fmt::format("blaster-shared-headers-{}-{}", ::getpid(), counter++);
    // A root of its own, whose kernels/common/ can change: a copy of the project's.
    fs::create_directories(dir_ / "root" / "kernels");
    fs::copy(source_root / "kernels" / "common", dir_ / "root" / "kernels" / "common");
    fs::create_directories(dir_ / "root" / "tasks");
    fs::create_directory_symlink(source_root / "tasks" / "rmsnorm",
                                 dir_ / "root" / "tasks" / "rmsnorm");
    file_ = dir_ / "block_rmsnorm.cu";
    std::ofstream(file_) << block_rmsnorm;
    limits_.executable = BLASTER_BINARY;
  }
  void TearDown() override { fs::remove_all(dir_); }

  [[nodiscard]] fs::path common() const { return dir_ / "root" / "kernels" / "common"; }

  fs::path dir_;
  fs::path file_;
  compile_limits limits_;
};

TEST_F(SharedHeaders, ACandidateCompilesWithTheSharedHeadersItIncludes) {
  const candidate_file c = load_candidate(file_, "sm_90a", nullptr, limits_, common());
  ASSERT_TRUE(c.compile_error.empty()) << c.compile_error;
  ASSERT_EQ(c.variants.size(), 1U) << c.plan_error;
  const compile_output& out = c.variants[0].compiled;
  ASSERT_TRUE(out.ok) << out.log;
  // block_reduce.cuh and the warp_reduce.cuh it includes, each with its digest.
  ASSERT_EQ(c.headers.size(), 2U);
  EXPECT_EQ(c.headers[0].name, "common/block_reduce.cuh");
  EXPECT_EQ(c.headers[1].name, "common/warp_reduce.cuh");
  EXPECT_EQ(out.header_sha256.at("common/warp_reduce.cuh"), sha256_hex(c.headers[1].content));
  EXPECT_EQ(out.sources_sha256, c.sources_sha256);
  EXPECT_NE(c.sources_sha256, sha256_hex(c.source));

  // Without the shared folder the same file is refused, before NVRTC runs.
  const candidate_file alone = load_candidate(file_, "sm_90a", nullptr, limits_, {});
  EXPECT_NE(alone.compile_error.find(":10:11: \"common/block_reduce.cuh\": no such header"),
            std::string::npos)
      << alone.compile_error;
}

TEST_F(SharedHeaders, AChangedHeaderIsAChangedCandidate) {
  const candidate_file before = load_candidate(file_, "sm_90a", nullptr, limits_, common());
  ASSERT_EQ(before.variants.size(), 1U);
  { std::ofstream(common() / "warp_reduce.cuh", std::ios::app) << "// one more line\n"; }
  const candidate_file after = load_candidate(file_, "sm_90a", nullptr, limits_, common());
  ASSERT_EQ(after.variants.size(), 1U);
  EXPECT_EQ(before.source, after.source);
  EXPECT_NE(before.sources_sha256, after.sources_sha256);
  EXPECT_NE(before.variants[0].compiled.key, after.variants[0].compiled.key);
}

TEST_F(SharedHeaders, TheStoreKeepsTheHeadersBesideTheSource) {
  bench_options options;
  options.root = dir_ / "root";
  options.task = "rmsnorm";
  options.skip_baseline = true;
  options.candidates = {file_};
  options.compile = limits_;
  store records(dir_ / "home");
  const bench_report report = compile_task(options, records);
  ASSERT_EQ(report.results.size(), 1U);
  const variant_result& r = report.results[0];
  EXPECT_EQ(r.status, "compiled") << r.message << r.log;
  EXPECT_FALSE(r.sources_sha256.empty());
  EXPECT_NE(r.sources_sha256, r.source_sha256);
  EXPECT_TRUE(records.cas().contains(r.source_sha256));
  for (const char* name : {"block_reduce.cuh", "warp_reduce.cuh"}) {
    EXPECT_TRUE(records.cas().contains(sha256_hex(read_file(common() / name)))) << name;
  }
}

}  // namespace
}  // namespace blaster
