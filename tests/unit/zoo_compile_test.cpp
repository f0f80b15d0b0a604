// The honest zoo (tests/gpu/kernels/zoo/<task>/<style>.cu) without a GPU: every kernel compiles
// for sm_90a through the candidate loader, and every variant's plan resolves (grid and block
// limits, whole clusters, argument counts and kinds, scratch sizes) on every fixed case of its
// task and on the cases drawn from the task's ranges with several seeds, so that the GPU run of
// tests/gpu/zoo_test.cpp meets no plan that cannot launch. The zoo's shape is held here too:
// six tasks, at least three styles each, every style at least once.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "benchmarking/candidate/candidate.hpp"
#include "benchmarking/candidate/kernel_binding.hpp"
#include "core/compile_cache.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "evidence/store.hpp"
#include "tasks/drawn_cases.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;

const fs::path source_root = BLASTER_SOURCE_DIR;
const fs::path zoo_root = source_root / "tests" / "gpu" / "kernels" / "zoo";
constexpr const char* arch = "sm_90a";

// Seeds of the drawn cases: besides the gate's own per run, a few fixed ones, so that a plan
// that fails only on some drawn shapes fails here on one of them, reproducibly.
const std::vector<std::uint64_t> drawn_seeds = {1, 60, 20240601, 0x5eed5eed5eedULL};

// The zoo's tasks, one of each kind, and the styles it must show.
const std::vector<std::string> zoo_tasks = {
    "relu", "rms_norm", "sum_dim1", "fused_add_rms_norm", "embedding_gather", "moe_route"};
const std::set<std::string> zoo_styles = {"naive",         "vectorized",     "warp_per_row",
                                          "block_per_row", "split_two_pass", "persistent",
                                          "cluster",       "in_place",       "cub"};

compile_limits sandbox() {
  compile_limits limits;
  limits.executable = BLASTER_BINARY;
  return limits;
}

// A fresh folder for the test's store and compile cache, removed afterwards.
class temp_folder {
 public:
  temp_folder() {
    static std::atomic<int> counter{0};
    path_ =
        fs::temp_directory_path() / fmt::format("blaster-zoo-compile-{}-{}", ::getpid(), counter++);
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~temp_folder() { fs::remove_all(path_); }
  temp_folder(const temp_folder&) = delete;
  temp_folder& operator=(const temp_folder&) = delete;
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::vector<fs::path> zoo_files(const std::string& task) {
  std::vector<fs::path> files;
  if (!fs::is_directory(zoo_root / task)) return files;
  for (const auto& entry : fs::directory_iterator(zoo_root / task)) {
    if (entry.is_regular_file() && entry.path().extension() == ".cu") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(ZooCompile, SixTasksOfEveryKindEachWithThreeStylesAndEveryStyleOnce) {
  std::set<std::string> seen;
  for (const auto& task : zoo_tasks) {
    const auto files = zoo_files(task);
    EXPECT_GE(files.size(), 3U) << task;
    for (const auto& file : files) {
      const std::string style = file.stem().string();
      EXPECT_TRUE(zoo_styles.contains(style)) << file << " is named for no style of the zoo";
      seen.insert(style);
      // Each file says its style and why it is honest where it looks like a cheat.
      EXPECT_NE(read_file(file).find("// Style: "), std::string::npos) << file;
    }
  }
  EXPECT_EQ(seen, zoo_styles);
  // No folder of the zoo is left out of the list above.
  for (const auto& entry : fs::directory_iterator(zoo_root)) {
    const std::string name = entry.path().filename().string();
    EXPECT_NE(std::find(zoo_tasks.begin(), zoo_tasks.end(), name), zoo_tasks.end()) << name;
  }
}

TEST(ZooCompile, EveryKernelCompilesAndResolvesOnEveryFixedAndDrawnCase) {
  const temp_folder home;
  store records(home.path());
  compile_cache cache(home.path() / "cache", records.cas());
  const fs::path common_headers = common_headers_folder(source_root);

  std::size_t files_compiled = 0;
  for (const auto& task_name : zoo_tasks) {
    task_spec task = load_task(source_root / "tasks" / task_name);
    const std::size_t fixed = task.cases.size();
    for (const auto seed : drawn_seeds) add_drawn_cases(task, seed);
    // Every task of the zoo states ranges, so the walk below meets drawn shapes.
    EXPECT_GT(task.cases.size(), fixed) << task_name;

    for (const auto& file : zoo_files(task_name)) {
      SCOPED_TRACE(file.string());
      const candidate_file candidate =
          load_candidate(file, arch, &cache, sandbox(), common_headers);
      ASSERT_TRUE(candidate.compile_error.empty()) << candidate.compile_error;
      ASSERT_TRUE(candidate.plan.has_value()) << candidate.plan_error;
      ASSERT_FALSE(candidate.variants.empty());
      ++files_compiled;
      for (const auto& v : candidate.variants) {
        ASSERT_TRUE(v.compiled.ok) << v.label << ":\n" << v.compiled.log;
        ASSERT_EQ(v.kernels.size(), candidate.plan->launch.size()) << v.label;
        const std::set<std::string> distinct(v.kernels.begin(), v.kernels.end());
        ASSERT_EQ(v.resources.size(), distinct.size()) << v.label << ":\n" << v.compiled.log;
        for (const auto& r : v.resources) {
          // No spills: a zoo kernel is plain code, and a spill would say a param went wrong.
          EXPECT_EQ(r.spill_store_bytes, 0) << v.label << " " << r.lowered_name;
        }
        for (const auto& c : task.cases) {
          try {
            const resolved_plan plan = resolve_plan(*candidate.plan, v, task, c);
            EXPECT_EQ(plan.launches.size(), candidate.plan->launch.size());
          } catch (const input_error& e) {
            ADD_FAILURE() << fmt::format("{} {} case {} ({}): {}", file.string(), v.label, c.name,
                                         task.describe(c), e.what());
          }
        }
      }
    }
  }
  EXPECT_GE(files_compiled, 3 * zoo_tasks.size());
}

}  // namespace
}  // namespace blaster
