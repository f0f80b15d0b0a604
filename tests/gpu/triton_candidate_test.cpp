// Triton candidates through the same gate as CUDA ones: the honest kernel passes (and so does
// the same kernel taken from its file by name), one that writes past the end of its output and
// one that leaves outputs unwritten are rejected with the reasons their CUDA twins get
// (tests/adversarial/one_past_end.cu, partial_output.cu). Skips where there is no GPU, or no
// triton for python3 (or for the interpreter BLASTER_PYTHON names); BLASTER_REQUIRE_TRITON=1
// turns the second skip into a failure.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>

#include <fmt/format.h>

#include "benchmarking/runner/bench_runner.hpp"
#include "core/file_io.hpp"
#include "core/frontends/triton_frontend.hpp"
#include "evidence/store.hpp"
#include "gpu/require_gpu.hpp"

namespace blaster {
namespace {

const std::filesystem::path source_dir = [] {
  const char* root = std::getenv("BLASTER_ROOT");
  return std::filesystem::path(root != nullptr && *root != '\0' ? root : BLASTER_SOURCE_DIR);
}();

std::string python_for_tests() {
  const char* named = std::getenv("BLASTER_PYTHON");
  return named != nullptr && *named != '\0' ? named : "python3";
}

// The verdict a Triton candidate's header names: "# expect: reason".
std::string expected_verdict(const std::filesystem::path& file) {
  static const std::regex expect(R"(# expect: ([a-z_]+))");
  std::smatch m;
  const std::string source = read_file(file);
  return std::regex_search(source, m, expect) ? m[1].str() : "";
}

TEST(TritonGpu, TritonCandidatesMeetTheGateAsCudaOnesDo) {
  BLASTER_REQUIRE_GPU();
  compile_limits limits;
  limits.executable = BLASTER_BINARY;
  limits.python = python_for_tests();
  const triton_interpreter& python = find_triton(limits.python.string(), limits);
  if (!python.error.empty()) {
    const char* required = std::getenv("BLASTER_REQUIRE_TRITON");
    if (required != nullptr && std::string(required) == "1") {
      FAIL() << "BLASTER_REQUIRE_TRITON=1 but " << python.error;
    }
    GTEST_SKIP() << "needs triton: " << python.error;
  }

  const auto folder = source_dir / "tests" / "adversarial" / "triton";
  bench_options options;
  options.root = source_dir;
  options.task = "rmsnorm";
  options.candidates = {folder};
  options.timing.max_samples = 20;
  options.worker_executable = BLASTER_BINARY;
  options.command = "triton candidates";
  options.compile = limits;
  const auto home = std::filesystem::temp_directory_path() /
                    fmt::format("blaster-triton-gpu-{}", ::getpid());
  std::filesystem::remove_all(home);
  bench_report report;
  {
    store records(home);
    report = run_bench(options, records);
  }
  std::filesystem::remove_all(home);
  ASSERT_TRUE(report.gpu) << report.gpu_unavailable;

  std::size_t triton_results = 0;
  for (const auto& r : report.results) {
    const std::string verdict = r.status == "passed" ? "passed" : std::string(to_string(r.reason));
    const std::filesystem::path file = r.file;
    if (file.extension() != ".py") {
      EXPECT_EQ(verdict, "passed") << r.label << ": " << r.message;  // init.cu
      continue;
    }
    ++triton_results;
    const std::string expected = expected_verdict(file);
    ASSERT_FALSE(expected.empty()) << file << " names no expected verdict";
    EXPECT_EQ(verdict, expected) << r.label << ": " << r.message << "\n" << r.log;
    if (verdict != "passed") {
      EXPECT_FALSE(r.timing.has_value()) << r.label << " was timed although it was rejected";
      EXPECT_FALSE(r.message.empty()) << r.label << " was rejected without evidence";
    } else {
      EXPECT_TRUE(r.time_us.has_value()) << r.label;
    }
  }
  // honest, one past the end, half unwritten, and the four variants taken from the file.
  EXPECT_EQ(triton_results, 7U);
}

}  // namespace
}  // namespace blaster
