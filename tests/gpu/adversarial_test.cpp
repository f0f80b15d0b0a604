// The adversarial suite: every cheating or broken kernel in tests/adversarial/ gets the reason
// its header names ("// expect: reason" or "reason|reason"), the honest candidates still pass,
// and the whole run finishes well within a minute of the deadlines it has to wait out.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "benchmarking/bench_runner.hpp"
#include "core/file_io.hpp"
#include "core/store.hpp"
#include "gpu/require_gpu.hpp"

namespace blaster {
namespace {

const std::filesystem::path source_dir = [] {
  const char* root = std::getenv("BLASTER_ROOT");
  return std::filesystem::path(root != nullptr && *root != '\0' ? root : BLASTER_SOURCE_DIR);
}();

// The verdicts a kernel's header allows.
std::set<std::string> expected_verdicts(const std::filesystem::path& file) {
  static const std::regex expect(R"(// expect: ([a-z_|]+))");
  std::smatch m;
  const std::string source = read_file(file);
  if (!std::regex_search(source, m, expect)) return {};
  std::set<std::string> out;
  std::stringstream list(m[1].str());
  for (std::string item; std::getline(list, item, '|');) out.insert(item);
  return out;
}

TEST(AdversarialGpu, EveryCheatIsRejectedWithItsReasonAndHonestKernelsPass) {
  BLASTER_REQUIRE_GPU();
  const auto home = std::filesystem::temp_directory_path() /
                    ("blaster-adversarial-" + std::to_string(::getpid()));
  std::filesystem::remove_all(home);
  bench_options options;
  options.root = source_dir;
  options.task = "rmsnorm";
  options.candidates = {source_dir / "tests" / "adversarial", source_dir / "kernels" / "rmsnorm"};
  options.timing.max_samples = 30;
  options.worker_executable = BLASTER_BINARY;
  options.command = "adversarial suite";
  const auto started = std::chrono::steady_clock::now();
  bench_report report;
  {
    store records(home);
    report = run_bench(options, records);
  }
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_TRUE(report.gpu) << report.gpu_unavailable;

  std::size_t adversarial = 0;
  std::size_t timeouts = 0;
  for (const auto& r : report.results) {
    const std::string verdict = r.status == "passed" ? "passed" : std::string(to_string(r.reason));
    const std::filesystem::path file = r.file;
    if (file.parent_path().filename() == "adversarial") {
      ++adversarial;
      const auto allowed = expected_verdicts(file);
      ASSERT_FALSE(allowed.empty()) << file << " names no expected verdict";
      EXPECT_TRUE(allowed.contains(verdict))
          << r.label << " got " << verdict << ": " << r.message;
      if (verdict != "passed") {
        EXPECT_FALSE(r.timing) << r.label << " was timed although it was rejected";
        EXPECT_FALSE(r.message.empty()) << r.label << " was rejected without evidence";
      }
      if (verdict == "timeout") ++timeouts;
    } else {
      EXPECT_EQ(verdict, "passed") << r.label << ": " << r.message;
    }
  }
  // Every file of the suite ran: none was dropped before the gate.
  std::size_t files = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(source_dir / "tests" / "adversarial"))
    files += entry.path().extension() == ".cu" ? 1 : 0;
  EXPECT_EQ(adversarial, files);
  EXPECT_GE(files, 18U);
  EXPECT_GE(timeouts, 1U);
  // Well under a minute beyond the deadlines it waited out.
  EXPECT_LT(wall_s, 60.0 + report.deadline_s * static_cast<double>(timeouts)) << wall_s;

  // Every case is on record, with its reason.
  store records(home);
  auto rows = records.db().prepare(
      "SELECT COUNT(*), COUNT(reason) FROM results WHERE run_id = ?");
  rows.bind(1, report.run_id);
  ASSERT_TRUE(rows.step());
  EXPECT_EQ(rows.column_int64(0), static_cast<std::int64_t>(report.results.size()));
  std::int64_t rejected = 0;
  for (const auto& r : report.results) rejected += r.status == "rejected" ? 1 : 0;
  EXPECT_EQ(rows.column_int64(1), rejected);
  std::filesystem::remove_all(home);
}

}  // namespace
}  // namespace blaster
