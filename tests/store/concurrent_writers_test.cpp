// Two processes writing to one home at the same moment lose nothing.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <set>
#include <string>

#include <fmt/format.h>

#include "recorded_run.hpp"
#include "store_test_support.hpp"

namespace blaster::testing {
namespace {

constexpr int runs_per_writer = 40;

// Waits for the start signal, then records runs; exits 0 when all went in.
[[noreturn]] void write_runs(const fs::path& home, const std::string& name, int start_pipe) {
  char go = 0;
  if (::read(start_pipe, &go, 1) < 0) ::_exit(4);  // EOF: the parent closed it, start
  try {
    store s(home);
    for (int i = 0; i < runs_per_writer; ++i) {
      // Both writers also put the same bytes at the same time: one object, no error.
      s.cas().put(fmt::format("shared object {}", i));
      record_bench_run(s, "rmsnorm", fmt::format("{}-{}", name, i));
    }
    ::_exit(0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s failed: %s\n", name.c_str(), e.what());
    std::fflush(stderr);
    ::_exit(3);
  }
}

TEST(ConcurrentWriters, TwoProcessesOnOneHomeLoseNothing) {
  const temp_folder home("concurrent");
  int start[2];
  ASSERT_EQ(::pipe(start), 0);
  pid_t writers[2];
  for (int w = 0; w < 2; ++w) {
    writers[w] = ::fork();
    ASSERT_GE(writers[w], 0);
    if (writers[w] == 0) {
      ::close(start[1]);
      write_runs(home.path(), w == 0 ? "A" : "B", start[0]);
    }
  }
  ::close(start[0]);
  ::close(start[1]);  // both start now, on a home that does not exist yet
  for (const pid_t writer : writers) {
    int status = 0;
    ASSERT_EQ(::waitpid(writer, &status, 0), writer);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "a writer failed (see its stderr)";
  }

  store s(home.path());
  expect_store_is_whole(s);
  EXPECT_EQ(query_int(s.db(), "SELECT count(*) FROM runs WHERE status = 'completed'"),
            2 * runs_per_writer);
  EXPECT_EQ(query_int(s.db(), "SELECT count(*) FROM results"), 2 * runs_per_writer * 3);
  EXPECT_EQ(query_int(s.db(), "SELECT count(DISTINCT report_sha256) FROM runs"),
            2 * runs_per_writer);
  EXPECT_EQ(query_int(s.db(), "SELECT count(*) FROM measurements"), 2 * runs_per_writer);
  // One device row: both writers recorded the same fingerprint.
  EXPECT_EQ(query_int(s.db(), "SELECT count(*) FROM device_fingerprints"), 1);
  for (int i = 0; i < runs_per_writer; ++i) {
    EXPECT_TRUE(s.cas().contains(sha256_hex(fmt::format("shared object {}", i))));
  }
  for (const auto& r : run_catalog(s).runs({})) {
    EXPECT_EQ(r.results, 3) << "run " << r.run.id;
    EXPECT_EQ(r.passed, 2) << "run " << r.run.id;
  }
}

}  // namespace
}  // namespace blaster::testing
