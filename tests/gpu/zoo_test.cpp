// The honest zoo on the GPU: the kernels of tests/gpu/kernels/zoo/<task>/, written to be correct
// in many styles (naive, vectorized, a warp or a block per row, split reductions with a second
// pass, persistent grids, clusters, an in-place overwrite, CUB), are benched with their task's
// baseline at every served size of the task (the infer suite's cases that are not large, else
// the canonical case) in hot, cold and graph mode, as one series per task: each variant is gated
// once, on every fixed and drawn case, then timed at each size in each mode. Every variant must
// pass every run; each rejection is printed with its reason, its message and the timing's
// evidence, and each task ends with a line counting them, which is the number of false
// rejections on the card at hand (goal: zero, on the H100 and the H200).
//
// One test per task (ZooGpu.EveryVariantPassesAtEveryServedSizeInEveryMode/<task>), so that one
// task can be run alone with --gtest_filter. With 30 samples per timing and one session, a task
// of one served size (relu, sum_dim1) takes well under a minute; rms_norm and fused_add_rms_norm
// (6 sizes x 3 modes x 6 variants) and moe_route (5 x 3 x 4) a few minutes each: about ten
// minutes for the zoo, most of it the timings' workers starting and their output checks.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "benchmarking/runner/bench_runner.hpp"
#include "benchmarking/runner/warm_bench.hpp"
#include "evidence/store.hpp"
#include "gpu/require_gpu.hpp"
#include "portfolio/suite.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;

// The tree under test: BLASTER_ROOT where scripts/test.sh sets it, else the one built from.
const fs::path source_dir = [] {
  const char* root = std::getenv("BLASTER_ROOT");
  return fs::path(root != nullptr && *root != '\0' ? root : BLASTER_SOURCE_DIR);
}();

constexpr timing_mode zoo_modes[] = {timing_mode::hot, timing_mode::cold, timing_mode::graph};

// The sizes the infer suite serves of `task`, less those marked large (gigabytes, checked only
// when timed); a task outside the suite serves its canonical case.
std::vector<std::string> served_sizes(const task_spec& task) {
  std::vector<std::string> sizes;
  for (const auto& entry : load_suite(source_dir, "infer").entries) {
    if (entry.task != task.name) continue;
    for (const auto& c : entry.cases) {
      if (!task.find_case(c.name).large) sizes.push_back(c.name);
    }
  }
  if (sizes.empty()) sizes.push_back(task.canonical_case);
  return sizes;
}

// The .cu files of the task's zoo, by name.
std::set<std::string> zoo_files(const fs::path& folder) {
  std::set<std::string> files;
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (entry.path().extension() == ".cu") files.insert(entry.path().string());
  }
  return files;
}

// A rejected variant's evidence: its reason and message, and the timing's checks where it got
// that far.
std::string evidence_of(const variant_result& r) {
  std::string evidence = fmt::format("{} {}", to_string(r.reason), r.message);
  if (r.poisoned) evidence += fmt::format("\n  poisoned: {}", to_json(*r.poisoned).dump());
  if (r.unseen) evidence += fmt::format("\n  unseen: {}", to_json(*r.unseen).dump());
  return evidence;
}

class ZooGpu : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    home_ = fs::temp_directory_path() / fmt::format("blaster-zoo-{}-{}", ::getpid(), GetParam());
    fs::remove_all(home_);
  }
  void TearDown() override { fs::remove_all(home_); }

  fs::path home_;
};

TEST_P(ZooGpu, EveryVariantPassesAtEveryServedSizeInEveryMode) {
  BLASTER_REQUIRE_GPU();
  const std::string& task_name = GetParam();
  const task_spec task = load_task(source_dir, task_name);
  const fs::path zoo = source_dir / "tests" / "gpu" / "kernels" / "zoo" / task_name;
  const std::set<std::string> files = zoo_files(zoo);
  ASSERT_GE(files.size(), 3U) << zoo;
  const std::vector<std::string> sizes = served_sizes(task);

  warm_bench series(/*keep_worker=*/false);
  series.cases = sizes;
  store records(home_);
  const auto started = std::chrono::steady_clock::now();
  std::string card;
  std::size_t runs = 0;
  std::size_t variants = 0;
  std::size_t rejected = 0;
  for (const auto& size : sizes) {
    for (const timing_mode mode : zoo_modes) {
      const std::string run = fmt::format("{} {} {}", task_name, size, to_string(mode));
      SCOPED_TRACE(run);
      bench_options options;
      options.root = source_dir;
      options.task = task_name;
      options.candidates = {zoo};
      options.use_tuned = false;  // the zoo has no tuned tables; every configuration runs
      options.timed_case = size;
      options.timing.mode = mode;
      options.mode_given = true;
      options.timing.max_samples = 30;
      options.cooldown_s = 0.0;
      options.worker_executable = BLASTER_BINARY;
      options.command = "zoo test, " + run;
      const bench_report report = run_bench(options, records, &series);
      ASSERT_TRUE(report.gpu) << report.gpu_unavailable;
      if (report.device) card = report.device->name;
      ++runs;

      // The baseline and every file of the zoo, each with all its variants, in every run.
      std::set<std::string> ran;
      bool baseline = false;
      for (const auto& r : report.results) {
        if (r.baseline) {
          baseline = true;
        } else {
          ran.insert(r.file);
        }
      }
      EXPECT_TRUE(baseline) << run;
      EXPECT_EQ(ran, files) << run;
      if (variants == 0) variants = report.results.size();
      EXPECT_EQ(report.results.size(), variants) << run;

      for (const auto& r : report.results) {
        if (r.status == "passed") {
          EXPECT_TRUE(r.time_us) << run << " " << r.label << " passed untimed";
          continue;
        }
        ++rejected;
        ADD_FAILURE() << run << ": " << r.label << " (" << r.file << ") was " << r.status << ": "
                      << evidence_of(r);
      }
    }
  }
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // The count the closing note asks for, per card.
  fmt::print("zoo {} on {}: {} variants x {} runs ({} sizes x {} modes), {} rejected, {:.0f} s\n",
             task_name, card, variants, runs, sizes.size(), std::size(zoo_modes), rejected, wall_s);
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooGpu,
                         ::testing::Values("relu", "rms_norm", "sum_dim1", "fused_add_rms_norm",
                                           "embedding_gather", "moe_route"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace blaster
