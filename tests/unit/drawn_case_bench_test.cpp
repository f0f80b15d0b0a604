// A bench draws its gate's extra shapes from the run's seed, and times a drawn case named as an
// earlier run's evidence names it ("drawn:SEED:k"), rebuilt from the name alone; a name that
// names no drawn case is bad input. Without a GPU: the compile stage resolves every variant's
// plan on the drawn shapes and reports the timed case's.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "benchmarking/runner/bench_runner.hpp"
#include "core/error.hpp"
#include "evidence/store.hpp"
#include "tasks/drawn_cases.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;

const fs::path source_root = BLASTER_SOURCE_DIR;

class DrawnCaseBench : public ::testing::Test {
 protected:
  void SetUp() override {
    home_ = fs::temp_directory_path() / fmt::format("blaster-drawn-bench-{}", ::getpid());
    fs::remove_all(home_);
  }
  void TearDown() override { fs::remove_all(home_); }

  bench_report bench(const std::string& timed_case) const {
    bench_options options;
    options.root = source_root;
    options.task = "sum_dim1";
    options.timed_case = timed_case;
    options.seed = 7;
    options.compile_only = true;
    options.worker_executable = BLASTER_BINARY;
    options.compile.executable = BLASTER_BINARY;
    store records(home_);
    return run_bench(options, records);
  }

  fs::path home_;
};

TEST_F(DrawnCaseBench, ADrawnCaseIsTimedByTheNameItsEvidenceGives) {
  const task_spec task = load_task(source_root, "sum_dim1");
  const auto drawn = draw_cases(task, 1234);
  ASSERT_GE(drawn.size(), 3U);
  const bench_report report = bench("drawn:1234:2");
  EXPECT_EQ(report.timed_case, "drawn:1234:2");
  EXPECT_EQ(report.timed_shape, task.describe(drawn[2]));
  // Every variant compiled and its plan resolved on every case, the drawn ones included.
  for (const auto& r : report.results) EXPECT_TRUE(r.reason == reason_code::none) << r.label;
}

TEST_F(DrawnCaseBench, ANameThatNamesNoDrawnCaseIsBadInput) {
  for (const char* name : {"drawn:seven:1", "drawn:1234:999", "drawn:1234:"}) {
    SCOPED_TRACE(name);
    try {
      static_cast<void>(bench(name));
      ADD_FAILURE() << "accepted";
    } catch (const input_error& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace blaster
