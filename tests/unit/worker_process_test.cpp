// The supervisor with host-only children: it reads the result channel, survives crashes and
// hangs, kills on the deadline, and hands the child no descriptor but that channel.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "core/worker_process.hpp"

namespace blaster {
namespace {

using namespace std::chrono_literals;

worker_outcome shell(const std::string& script, std::chrono::milliseconds deadline = 5000ms) {
  return run_worker({"/bin/sh", "-c", script}, deadline);
}

TEST(WorkerProcess, ReadsEveryLineOfTheResultChannel) {
  std::vector<std::string> seen;
  const auto outcome = run_worker({"/bin/sh", "-c", "echo one >&3; echo two >&3; printf x >&3"},
                                  5000ms, [&](const std::string& line) { seen.push_back(line); });
  EXPECT_TRUE(outcome.clean_exit()) << outcome.describe();
  EXPECT_EQ(outcome.messages, (std::vector<std::string>{"one", "two", "x"}));
  EXPECT_EQ(seen, (std::vector<std::string>{"one", "two"}));  // "x" came without a newline
}

TEST(WorkerProcess, AnAbortIsASignalNotAnExitOfTheParent) {
  const auto outcome = shell("echo started >&3; kill -ABRT $$");
  EXPECT_EQ(outcome.how, worker_outcome::ending::signaled);
  EXPECT_EQ(outcome.signal, SIGABRT);
  EXPECT_EQ(outcome.messages, std::vector<std::string>{"started"});
  EXPECT_NE(outcome.describe().find("signal 6"), std::string::npos) << outcome.describe();
}

TEST(WorkerProcess, ANonZeroExitIsReported) {
  const auto outcome = shell("exit 7");
  EXPECT_EQ(outcome.how, worker_outcome::ending::exited);
  EXPECT_EQ(outcome.exit_code, 7);
  EXPECT_FALSE(outcome.clean_exit());
}

TEST(WorkerProcess, AHangIsKilledAtTheDeadline) {
  const auto started = std::chrono::steady_clock::now();
  const auto outcome = shell("echo waiting >&3; sleep 60", 300ms);
  const double waited_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(outcome.how, worker_outcome::ending::timed_out);
  EXPECT_LT(waited_s, 5.0);
  EXPECT_GE(outcome.wall_s, 0.3);
  EXPECT_EQ(outcome.messages, std::vector<std::string>{"waiting"});
}

TEST(WorkerProcess, AChildThatClosesItsChannelAndHangsIsStillKilled) {
  const auto outcome = shell("exec 3>&-; sleep 60", 300ms);
  EXPECT_EQ(outcome.how, worker_outcome::ending::timed_out);
}

TEST(WorkerProcess, ItsGrandchildrenDieWithIt) {
  // A background sleeper keeps the pipe open; the child's own end must still end the wait, and
  // the group kill must end the sleeper.
  const auto started = std::chrono::steady_clock::now();
  const auto outcome = shell("sleep 60 & echo $! >&3; exit 0", 2000ms);
  EXPECT_TRUE(outcome.clean_exit()) << outcome.describe();
  const double waited_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_EQ(outcome.messages.size(), 1U);
  EXPECT_LT(waited_s, 1.0);
  // Killed: gone, or a zombie waiting for whoever adopted it to reap it.
  const std::string stat_path = "/proc/" + outcome.messages[0] + "/stat";
  for (int i = 0; i < 100 && std::filesystem::exists(stat_path); ++i) {
    std::ifstream stat(stat_path);
    std::string pid, name, state;
    stat >> pid >> name >> state;
    if (state == "Z") break;
    ::usleep(10000);
  }
  if (std::filesystem::exists(stat_path)) {
    std::ifstream stat(stat_path);
    std::string pid, name, state;
    stat >> pid >> name >> state;
    EXPECT_EQ(state, "Z") << "the background process outlived the worker";
  }
}

TEST(WorkerProcess, InheritsNoDescriptorButItsChannel) {
  // Open a descriptor in the parent that a careless spawn would leak.
  const int leaked = ::dup(2);
  ASSERT_GE(leaked, 0);
  const auto outcome = shell("ls /proc/self/fd >&3");
  ::close(leaked);
  ASSERT_TRUE(outcome.clean_exit()) << outcome.describe();
  // 0, 1, 2 (/dev/null), 3 (the channel), and the one ls opens to list the folder.
  std::vector<int> fds;
  for (const auto& line : outcome.messages) fds.push_back(std::stoi(line));
  std::sort(fds.begin(), fds.end());
  ASSERT_GE(fds.size(), 4U);
  EXPECT_EQ(std::vector<int>(fds.begin(), fds.begin() + 4), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_LE(fds.size(), 5U) << "descriptors beyond the channel and ls's own";
}

TEST(WorkerProcess, StandardStreamsGoNowhere) {
  // A flood on stdout must not reach the parent, and must not block the child.
  const auto outcome = shell("yes flood | head -c 10000000; echo done >&3");
  EXPECT_TRUE(outcome.clean_exit()) << outcome.describe();
  EXPECT_EQ(outcome.messages, std::vector<std::string>{"done"});
}

TEST(WorkerProcess, AMissingProgramIsAnExitNotAHang) {
  const auto outcome = run_worker({"/no/such/program"}, 5000ms);
  EXPECT_EQ(outcome.how, worker_outcome::ending::exited);
  EXPECT_EQ(outcome.exit_code, 127);
}

}  // namespace
}  // namespace blaster
