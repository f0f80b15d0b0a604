// A writer killed at random points, many times, loses nothing that was committed and leaves no
// row citing an object that is not there.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "store_test_support.hpp"

namespace blaster::testing {
namespace {

// Eight bytes per draw: cheap, so that the writer spends its time writing.
std::string random_bytes(std::mt19937_64& rng, std::size_t max_bytes) {
  std::string bytes(std::uniform_int_distribution<std::size_t>(1, max_bytes)(rng), '\0');
  for (std::size_t i = 0; i < bytes.size(); i += sizeof(std::uint64_t)) {
    const std::uint64_t word = rng();
    std::memcpy(bytes.data() + i, &word, std::min(sizeof word, bytes.size() - i));
  }
  return bytes;
}

// Stores objects and the rows that cite them until it is killed; never returns.
[[noreturn]] void write_until_killed(const fs::path& home, unsigned seed) {
  try {
    store s(home);
    std::mt19937_64 rng(seed);
    for (int round = 0;; ++round) {
      // Objects large enough that a kill often lands inside a write.
      const std::string source = s.cas().put(random_bytes(rng, 32 << 10));
      const std::string cubin = s.cas().put(random_bytes(rng, 128 << 10));
      const std::string samples = s.cas().put(random_bytes(rng, 16 << 10));
      const std::string log = s.cas().put(random_bytes(rng, 4 << 10));
      const std::int64_t run =
          s.begin_run(fmt::format("writer {} round {}", seed, round), "t", "{}");
      s.record_variant_result(run, variant_result_record{.candidate = "c",
                                                         .variant = "v",
                                                         .status = "passed",
                                                         .source_sha256 = source,
                                                         .cubin_sha256 = cubin,
                                                         .samples_sha256 = samples,
                                                         .metrics = {{"time_us", 1.0}}});
      const std::int64_t compilation =
          s.record_compilation(run, compilation_record{.candidate = "c",
                                                       .variant = "v",
                                                       .source_sha256 = source,
                                                       .arch = "sm_90a",
                                                       .succeeded = true,
                                                       .log_sha256 = log,
                                                       .cubin_sha256 = cubin,
                                                       .kernels = {{.kernel = "k"}}});
      s.record_measurement(compilation, measurement_record{.case_name = "canonical",
                                                           .mode = "hot",
                                                           .protocol_json = "{}",
                                                           .samples_sha256 = samples,
                                                           .sample_count = 1,
                                                           .median_us = 1.0});
      s.finish_run(run, "completed", s.cas().put(random_bytes(rng, 16 << 10)));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "writer failed: %s\n", e.what());
    std::fflush(stderr);
    ::_exit(3);
  }
}

int count_temp_files(const fs::path& root) {
  int count = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    count += it->path().filename().string().find(".tmp.") != std::string::npos;
  }
  return count;
}

TEST(CrashSafety, WriterKilledAtRandomPointsLeavesAWholeStore) {
  const temp_folder home("crash");
  std::mt19937 rng(20251130);
  constexpr int iterations = 50;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  int killed = 0;
  int torn_writes = 0;  // the next writer's start removes them: count them now
  for (int i = 0; i < iterations && std::chrono::steady_clock::now() < deadline; ++i) {
    const pid_t writer = ::fork();
    ASSERT_GE(writer, 0) << "fork failed";
    if (writer == 0) write_until_killed(home.path(), static_cast<unsigned>(i));
    // From before the schema exists to many rounds in.
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 150)(rng)));
    ::kill(writer, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(writer, &status, 0), writer);
    ASSERT_TRUE(WIFSIGNALED(status))
        << "the writer stopped by itself, exit code " << WEXITSTATUS(status) << " (see its stderr)";
    ++killed;
    torn_writes += count_temp_files(home.path() / "cas");
  }
  EXPECT_GE(killed, 20);
  // Informative only: where a kill lands depends on the machine's timing.
  RecordProperty("torn_writes", torn_writes);
  std::printf("%d writers killed, %d of them inside a CAS write\n", killed, torn_writes);

  // Opening the store again is the recovery: SQLite replays its WAL, the CAS drops the temp
  // files of the dead writers.
  store s(home.path());
  expect_store_is_whole(s);
  for (const auto& entry : fs::recursive_directory_iterator(s.cas().root())) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos)
        << "a dead writer's temp file was left: " << entry.path();
  }
  const std::int64_t completed =
      query_int(s.db(), "SELECT count(*) FROM runs WHERE status = 'completed'");
  EXPECT_GT(completed, 0) << "the writers never got far enough to test anything";
  std::printf("%lld runs completed, %lld left running\n", static_cast<long long>(completed),
              static_cast<long long>(
                  query_int(s.db(), "SELECT count(*) FROM runs WHERE status = 'running'")));
  // A completed run has all its rows: each was committed before finish_run.
  EXPECT_EQ(query_int(s.db(),
                      "SELECT count(*) FROM runs r WHERE r.status = 'completed' AND ("
                      "(SELECT count(*) FROM results x WHERE x.run_id = r.id) != 1 OR "
                      "(SELECT count(*) FROM measurements m JOIN compilations c ON "
                      "c.id = m.compilation_id WHERE c.run_id = r.id) != 1)"),
            0);
  // And the store still takes writes.
  const std::int64_t run = s.begin_run("after the crashes", "t", "");
  s.finish_run(run, "completed", s.cas().put("after"));
}

}  // namespace
}  // namespace blaster::testing
