// Several GPUs (--gpus) on the GPU machine: a GPU that is not there is refused with the ones that
// are; a named GPU runs the bench and is the one its report names; with two GPUs or more the
// gates spread over them while every verdict is timed on the first, and a portfolio runs its
// tasks side by side, each on one GPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "benchmarking/runner/bench_runner.hpp"
#include "benchmarking/runner/gpu_lanes.hpp"
#include "benchmarking/runner/warm_bench.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "evidence/store.hpp"
#include "gpu/require_gpu.hpp"
#include "portfolio/portfolio_runner.hpp"
#include "portfolio/suite.hpp"

namespace blaster {
namespace {

const std::filesystem::path source_dir = [] {
  const char* root = std::getenv("BLASTER_ROOT");
  return std::filesystem::path(root != nullptr && *root != '\0' ? root : BLASTER_SOURCE_DIR);
}();

int gpu_count() {
  int count = 0;
  cuda::check(cuda::driver().cuDeviceGetCount(&count), "cuDeviceGetCount");
  return count;
}

class MultiGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    home_ = std::filesystem::temp_directory_path() /
            ("blaster-multi-gpu-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(home_);
  }
  void TearDown() override { std::filesystem::remove_all(home_); }

  bench_options rmsnorm(const gpu_choice& gpus) const {
    bench_options options;
    options.root = source_dir;
    options.task = "rmsnorm";
    options.gpus = gpus;
    options.cooldown_s = 0.0;
    options.timing.max_samples = 30;
    options.worker_executable = BLASTER_BINARY;
    options.command = "gpu test";
    return options;
  }

  std::filesystem::path home_;
};

TEST_F(MultiGpu, AGpuThatIsNotThereIsRefusedWithTheGpusThatAre) {
  BLASTER_REQUIRE_GPU();
  const int n = gpu_count();
  const gpu_choice missing{.all = false, .ordinals = {0, n}};
  try {
    static_cast<void>(choose_gpus(missing, BLASTER_BINARY));
    ADD_FAILURE() << "GPU " << n << " was accepted";
  } catch (const input_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("there is no GPU " + std::to_string(n)), std::string::npos) << what;
    EXPECT_NE(what.find("this machine shows " + std::to_string(n) + " GPU"), std::string::npos)
        << what;
  }
  store records(home_);
  EXPECT_THROW(static_cast<void>(run_bench(rmsnorm(missing), records)), input_error);
}

TEST_F(MultiGpu, DoctorListsTheGpusByTheNumbersGpusTakes) {
  BLASTER_REQUIRE_GPU();
  const std::vector<gpu_lane> all =
      choose_gpus(gpu_choice{.all = true, .ordinals = {}}, BLASTER_BINARY);
  FILE* pipe = ::popen((std::string(BLASTER_BINARY) + " doctor --json").c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buffer[4096];
  while (const std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  ASSERT_EQ(::pclose(pipe), 0) << out;
  const nlohmann::json doctor = nlohmann::json::parse(out);
  ASSERT_EQ(doctor.at("gpus").size(), all.size()) << out;
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(doctor["gpus"][i]["gpu"], all[i].ordinal);
    EXPECT_EQ(doctor["gpus"][i]["uuid"], all[i].device.uuid);
  }
}

TEST_F(MultiGpu, ANamedGpuRunsTheBenchAndIsTheOneItsReportNames) {
  BLASTER_REQUIRE_GPU();
  // The last GPU: on a machine with several, not the one a process sees first.
  const gpu_choice last{.all = false, .ordinals = {gpu_count() - 1}};
  const std::vector<gpu_lane> lanes = choose_gpus(last, BLASTER_BINARY);
  ASSERT_EQ(lanes.size(), 1U);
  bench_options options = rmsnorm(last);
  options.candidates = {source_dir / "kernels" / "rmsnorm" / "rmsnorm_vec_regs.cu"};
  store records(home_);
  const bench_report report = run_bench(options, records);
  ASSERT_TRUE(report.gpu) << report.gpu_unavailable;
  ASSERT_TRUE(report.device);
  EXPECT_EQ(report.device->uuid, lanes[0].device.uuid);
  EXPECT_TRUE(report.gpus.empty()) << "one GPU: the device alone names it";
  for (const auto& r : report.results) EXPECT_EQ(r.status, "passed") << r.label << r.message;
}

TEST_F(MultiGpu, GatesSpreadOverTheGpusAndEveryVerdictIsTimedOnTheFirst) {
  BLASTER_REQUIRE_GPU();
  if (gpu_count() < 2) GTEST_SKIP() << "needs two GPUs: this machine has " << gpu_count();
  bench_options options = rmsnorm(gpu_choice{.all = true, .ordinals = {}});
  options.sessions = 2;
  options.confirm_best = 1;
  options.use_tuned = false;  // every configuration of every candidate: work to spread
  store records(home_);
  const bench_report report = run_bench(options, records);
  ASSERT_TRUE(report.gpu) << report.gpu_unavailable;
  ASSERT_EQ(report.gpus.size(), static_cast<std::size_t>(gpu_count()));
  EXPECT_EQ(report.gpus.front().uuid, report.device->uuid);
  std::set<std::string> gated_on;
  int confirmed = 0;
  int screened = 0;
  for (const auto& r : report.results) {
    SCOPED_TRACE(r.label);
    if (r.checks.empty()) continue;  // not gated: rejected before the GPU
    EXPECT_FALSE(r.gated_on.empty());
    gated_on.insert(r.gated_on);
    if (r.status != "passed") continue;
    if (r.screened) {
      ++screened;
      EXPECT_FALSE(r.timed_on.empty());
      EXPECT_EQ(r.session_medians_us.size(), 1U);
    } else {
      ++confirmed;
      EXPECT_EQ(r.timed_on, report.device->uuid) << "a verdict's sessions are the first GPU's";
      EXPECT_EQ(r.session_medians_us.size(), 2U);
      if (!r.baseline) {
        EXPECT_TRUE(r.verdict.has_value());
      }
    }
  }
  EXPECT_GE(gated_on.size(), 2U) << "the gates ran on more than one GPU";
  EXPECT_EQ(confirmed, 2) << "the baseline and the one best candidate";
  EXPECT_GE(screened, 1);
}

TEST_F(MultiGpu, APortfolioRunsItsTasksSideBySideEachOnOneGpu) {
  BLASTER_REQUIRE_GPU();
  if (gpu_count() < 2) GTEST_SKIP() << "needs two GPUs: this machine has " << gpu_count();
  std::filesystem::create_directories(home_);
  const auto file = home_ / "pair.json";
  write_file_atomically(file, R"({"name": "pair", "title": "two tasks",
    "protocol": {"sessions": 2, "cooldown_s": 0},
    "entries": [{"id": "1", "task": "relu", "cases": [{"case": "canonical"}]},
                {"id": "2", "task": "rmsnorm", "cases": [{"case": "canonical"}]}]})");
  const suite s = load_suite(source_dir, file.string());
  portfolio_options options;
  options.root = source_dir;
  options.sanitize = false;
  options.command = "gpu test";
  options.gpus = choose_gpus(gpu_choice{.all = false, .ordinals = {0, 1}}, BLASTER_BINARY);
  store records(home_ / "home");
  const auto outcomes =
      run_portfolio(s, options, records, [](const bench_options& o, store& r, warm_bench& w) {
        bench_options b = o;
        b.worker_executable = BLASTER_BINARY;
        return run_bench(b, r, &w);
      });
  ASSERT_EQ(outcomes.size(), 2U);
  std::set<std::string> devices;
  for (const auto& o : outcomes) {
    ASSERT_TRUE(o.report.device) << o.item.key();
    devices.insert(o.report.device->uuid);
    for (const auto& r : o.report.results) EXPECT_EQ(r.status, "passed") << r.label;
  }
  EXPECT_EQ(devices.size(), 2U) << "each task on a GPU of its own";
}

}  // namespace
}  // namespace blaster
