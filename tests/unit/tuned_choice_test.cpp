// bench and a tuned table: the table of the candidate, device, dtype and shape decides which
// configuration runs at the timed case, through its entry nearest the case's size.

#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include <fmt/format.h>

#include "benchmarking/runner/detail/compile_stage.hpp"
#include "benchmarking/tuned/tuned_lookup.hpp"
#include "core/compile_cache.hpp"
#include "core/error.hpp"
#include "core/nvrtc_compiler.hpp"
#include "evidence/store.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;
const fs::path source_root = BLASTER_SOURCE_DIR;

class TunedChoice : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("blaster-tuned-{}-{}", ::getpid(), std::random_device{}());
    fs::create_directories(dir_ / "root" / "tasks");
    fs::create_directories(dir_ / "root" / "kernels" / "rms_norm" / "tuned");
    fs::create_directory_symlink(source_root / "tasks" / "rms_norm",
                                 dir_ / "root" / "tasks" / "rms_norm");
    fs::create_directory_symlink(source_root / "kernels" / "common",
                                 dir_ / "root" / "kernels" / "common");
    candidate_ = dir_ / "root" / "kernels" / "rms_norm" / "rms_norm_regs.cu";
    fs::copy_file(source_root / "kernels" / "rms_norm" / "rms_norm_regs.cu", candidate_);
    task_ = load_task(dir_ / "root", "rms_norm");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A table as tune writes it: one entry at one token, one at 8192; in `folder` under tuned/
  // (tune's: the candidate's stem; none: dropped in beside them, as an engine's table would be).
  void write_table(const std::string& name, const std::string& candidate = "rms_norm_regs.cu",
                   const std::string& folder = "", int threads_at_one = 512) {
    const fs::path tuned = dir_ / "root" / "kernels" / "rms_norm" / "tuned" / folder;
    fs::create_directories(tuned);
    std::ofstream(tuned / name) << fmt::format(R"({{"1": {{"THREADS": {}, "time_us": 1.75}},
                           "8192": {{"THREADS": 128, "time_us": 35.66}},
                           "candidate": "{}", "task": "rms_norm"}})",
                                               threads_at_one, candidate);
  }
  static std::string h200_name(const std::string& nvrtc) {
    return fmt::format("H=4096,device_name=NVIDIA_H200,dtype=bf16,nvrtc={},driver=13.0.json",
                       nvrtc);
  }

  // What compiling for a run on `device` at `timed_case` keeps of the candidate.
  bench_report compile(const std::string& timed_case, const std::string& device = "NVIDIA H200",
                       bool use_tuned = true, std::vector<fs::path> candidates = {}) {
    bench_options options;
    options.root = dir_ / "root";
    options.task = "rms_norm";
    options.candidates = candidates.empty() ? std::vector<fs::path>{candidate_} : candidates;
    options.timed_case = timed_case;
    options.use_tuned = use_tuned;
    options.compile.executable = BLASTER_BINARY;
    bench_report report;
    report.arch = "sm_90a";
    report.device = cuda::device_properties{};
    report.device->name = device;
    report.device->driver_version = 13000;
    store records(dir_ / "home");
    compile_cache cache(records.home() / "cache", records.cas());
    compiled_candidates out{.task = task_, .loaded = {}, .runnable = {}};
    compile_stage(options, records, cache, /*device_present=*/false, report, out);
    for (const auto& r : report.results) {
      if (r.tuned) {
        EXPECT_TRUE(records.cas().contains(r.tuned->sha256)) << "the run cites the table";
      }
    }
    return report;
  }

  fs::path dir_;
  fs::path candidate_;
  task_spec task_;
};

std::vector<std::string> labels(const bench_report& report) {
  std::vector<std::string> out;
  for (const auto& r : report.results) out.push_back(r.label);
  return out;
}

TEST_F(TunedChoice, EachCaseRunsTheEntryNearestItsSizeAndNamesIt) {
  write_table(h200_name(nvrtc_version()));
  const bench_report one = compile("t1");
  EXPECT_EQ(labels(one), (std::vector<std::string>{"init", "rms_norm_regs[THREADS=512]"}));
  ASSERT_TRUE(one.results[1].tuned.has_value());
  EXPECT_EQ(one.results[1].tuned->size, 1);
  EXPECT_EQ(one.results[1].tuned->size_symbol, "T");
  EXPECT_TRUE(one.results[1].tuned->differences.empty());
  EXPECT_FALSE(one.results[0].tuned.has_value()) << "the baseline is never tuned";
  // 1024 tokens lie nearer 1 than 8192: the engines' rule.
  EXPECT_EQ(labels(compile("t1024"))[1], "rms_norm_regs[THREADS=512]");
  EXPECT_EQ(labels(compile("t8192"))[1], "rms_norm_regs[THREADS=128]");
  // The 70B shape has no table: every configuration runs.
  EXPECT_EQ(compile("h8192_t1").results.size(), 4U);
}

// Two candidates of one task tuned at one shape: each table has the same file name, so tune
// writes each into its candidate's folder, and each candidate runs its own entry.
TEST_F(TunedChoice, TwoCandidatesTunedAtOneShapeEachRunTheirOwnTable) {
  const fs::path other = dir_ / "root" / "kernels" / "rms_norm" / "rms_norm_twin.cu";
  fs::copy_file(candidate_, other);
  write_table(h200_name(nvrtc_version()), "rms_norm_regs.cu", "rms_norm_regs", 512);
  write_table(h200_name(nvrtc_version()), "rms_norm_twin.cu", "rms_norm_twin", 256);
  EXPECT_EQ(fs::path(tuned_folder(dir_ / "root", "rms_norm", other)).filename(), "rms_norm_twin");
  const bench_report report = compile("t1", "NVIDIA H200", true, {candidate_, other});
  EXPECT_EQ(labels(report), (std::vector<std::string>{"init", "rms_norm_regs[THREADS=512]",
                                                      "rms_norm_twin[THREADS=256]"}));
  ASSERT_TRUE(report.results[2].tuned.has_value());
  EXPECT_NE(report.results[2].tuned->file.find("/tuned/rms_norm_twin/"), std::string::npos)
      << report.results[2].tuned->file;
}

TEST_F(TunedChoice, AnotherDeviceOrCandidateOrAllParamsRunsEveryConfiguration) {
  write_table(h200_name(nvrtc_version()));
  EXPECT_EQ(compile("t1", "NVIDIA A100-SXM4-80GB").results.size(), 4U);
  EXPECT_EQ(compile("t1", "NVIDIA H200", /*use_tuned=*/false).results.size(), 4U);
  fs::remove(dir_ / "root" / "kernels" / "rms_norm" / "tuned" / h200_name(nvrtc_version()));
  write_table(h200_name(nvrtc_version()), "rms_norm_other.cu");
  EXPECT_EQ(compile("t1").results.size(), 4U);
}

TEST_F(TunedChoice, ATableOfAnotherToolchainIsUsedAndSaysSoUnlessOneOfThisOneExists) {
  write_table(h200_name("12.4"));
  bench_report report = compile("t1");
  ASSERT_EQ(report.results.size(), 2U);
  ASSERT_TRUE(report.results[1].tuned.has_value());
  ASSERT_EQ(report.results[1].tuned->differences.size(), 1U);
  EXPECT_EQ(report.results[1].tuned->differences[0],
            fmt::format("nvrtc: 12.4, here {}", nvrtc_version()));
  EXPECT_NE(describe(*report.results[1].tuned).find("tuned with another toolchain"),
            std::string::npos);
  write_table(h200_name(nvrtc_version()));
  report = compile("t1");
  ASSERT_TRUE(report.results[1].tuned.has_value());
  EXPECT_TRUE(report.results[1].tuned->differences.empty()) << report.results[1].tuned->file;
}

TEST_F(TunedChoice, AnEntryTheCandidateNoLongerHasRunsEveryConfiguration) {
  std::ofstream(dir_ / "root" / "kernels" / "rms_norm" / "tuned" / h200_name(nvrtc_version()))
      << R"({"1": {"THREADS": 1024}, "candidate": "rms_norm_regs.cu"})";
  EXPECT_EQ(compile("t1").results.size(), 4U);
}

TEST_F(TunedChoice, ABrokenTableIsAnInputErrorNamingIt) {
  std::ofstream(dir_ / "root" / "kernels" / "rms_norm" / "tuned" / h200_name(nvrtc_version()))
      << R"({"1": [512]})";
  try {
    static_cast<void>(compile("t1"));
    FAIL() << "a broken table was read";
  } catch (const input_error& e) {
    EXPECT_NE(std::string(e.what()).find("H=4096,device_name=NVIDIA_H200"), std::string::npos)
        << e.what();
  }
}

TEST(TunedLookup, TheShapeKeyIsEveryIntegerSymbolButTheSize) {
  const task_spec task = load_task(source_root, "rms_norm");
  const auto key = shape_key(task, task.find_case("h8192_t1"), "T");
  EXPECT_EQ(key, (std::vector<std::pair<std::string, std::string>>{{"H", "8192"}}));
}

}  // namespace
}  // namespace blaster
