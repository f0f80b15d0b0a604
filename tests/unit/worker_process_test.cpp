// The supervisor with host-only children: it reads the result channel, survives crashes and
// hangs, kills on the deadline, and hands the child no descriptor but that channel.
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/worker_process.hpp"

namespace blaster {
namespace {

using namespace std::chrono_literals;

worker_outcome shell(const std::string& script, std::chrono::milliseconds deadline = 5000ms) {
  return run_worker({"/bin/sh", "-c", script}, deadline);
}

// The state letter of /proc/<pid>/stat, or "" when no such process exists. (The name field has
// no spaces for the programs these tests start.)
std::string process_state(const std::string& pid) {
  std::ifstream stat("/proc/" + pid + "/stat");
  std::string read_pid, name, state;
  stat >> read_pid >> name >> state;
  return state;
}

// Whether the process is killed within a second: gone, or a zombie waiting for whoever adopted
// it (or for its supervisor) to reap it.
bool ends_soon(const std::string& pid) {
  for (int i = 0; i < 100; ++i) {
    const std::string state = process_state(pid);
    if (state.empty() || state == "Z") return true;
    ::usleep(10000);
  }
  return false;
}

// The i-th word of a line, the pids these children report.
std::string word(const std::string& line, int i) {
  std::istringstream words(line);
  std::string w;
  for (int k = 0; k <= i; ++k) words >> w;
  return w;
}

bool done_line(const std::string& line) { return line.rfind("done", 0) == 0; }

// Echoes each request back, a step and then its last line.
constexpr const char* echo_script =
    "while read line; do echo \"step $line\" >&3; echo \"done $line\" >&3; done";

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
  EXPECT_TRUE(ends_soon(outcome.messages[0])) << "the background process outlived the worker";
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

TEST(WorkerProcess, ItsEnvironmentIsTheParentsWithTheGivenEntriesInPlace) {
  ::setenv("BLASTER_TEST_KEPT", "parent's", 1);
  ::setenv("CUDA_VISIBLE_DEVICES", "0,1", 1);
  // Given once, not beside the parent's value, which a program reading the first entry would get.
  const auto outcome = run_worker({"/bin/sh", "-c",
                                   "echo \"$CUDA_VISIBLE_DEVICES|$BLASTER_TEST_KEPT\" >&3; "
                                   "env | grep -c '^CUDA_VISIBLE_DEVICES=' >&3"},
                                  5000ms, {},
                                  worker_limits{.address_space_bytes = 0,
                                                .working_directory = {},
                                                .environment = {"CUDA_VISIBLE_DEVICES=1"}});
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  ::unsetenv("BLASTER_TEST_KEPT");
  EXPECT_TRUE(outcome.clean_exit()) << outcome.describe();
  EXPECT_EQ(outcome.messages, (std::vector<std::string>{"1|parent's", "1"}));
}

TEST(WorkerProcessPersistent, OneChildAnswersRequestsInTurnWithTheirOwnLines) {
  persistent_worker worker({"/bin/sh", "-c", echo_script});
  EXPECT_FALSE(worker.running());
  for (const std::string request : {"a", "b", "c"}) {
    std::vector<std::string> seen;
    const auto outcome = worker.exchange(request, 2000ms, done_line,
                                         [&](const std::string& line) { seen.push_back(line); });
    ASSERT_EQ(outcome.how, worker_outcome::ending::answered) << outcome.describe();
    EXPECT_EQ(outcome.messages, (std::vector<std::string>{"step " + request, "done " + request}));
    EXPECT_EQ(seen, outcome.messages);
    EXPECT_LT(outcome.wall_s, 2.0);
    EXPECT_EQ(outcome.describe(), "answered");
  }
  EXPECT_TRUE(worker.running());
  EXPECT_EQ(worker.started(), 1);
}

TEST(WorkerProcessPersistent, AChildIsReplacedAfterItsShareOfRequests) {
  // Each answer names the child's pid: three per child, then a fresh one.
  persistent_worker worker({"/bin/sh", "-c", "while read line; do echo \"done $$\" >&3; done"}, {},
                           3);
  std::vector<std::string> pids;
  for (int i = 0; i < 7; ++i) {
    const auto outcome = worker.exchange("x", 2000ms, done_line);
    ASSERT_EQ(outcome.how, worker_outcome::ending::answered) << outcome.describe();
    pids.push_back(word(outcome.messages.at(0), 1));
  }
  EXPECT_EQ(worker.started(), 3);
  EXPECT_EQ(pids[0], pids[2]);
  EXPECT_NE(pids[2], pids[3]);
  EXPECT_EQ(pids[3], pids[5]);
  EXPECT_NE(pids[5], pids[6]);
  EXPECT_TRUE(process_state(pids[0]).empty()) << "the first child was not reaped";
}

TEST(WorkerProcessPersistent, LinesAfterTheLastBelongToNoRequest) {
  persistent_worker worker(
      {"/bin/sh", "-c",
       "while read line; do echo \"done $line\" >&3; echo \"late $line\" >&3; done"});
  auto first = worker.exchange("a", 2000ms, done_line);
  ASSERT_EQ(first.how, worker_outcome::ending::answered) << first.describe();
  EXPECT_EQ(first.messages, std::vector<std::string>{"done a"});
  ::usleep(200000);  // "late a" is written by now, before the next request
  auto second = worker.exchange("b", 2000ms, done_line);
  ASSERT_EQ(second.how, worker_outcome::ending::answered) << second.describe();
  EXPECT_EQ(second.messages, std::vector<std::string>{"done b"});
}

TEST(WorkerProcessPersistent, AHangKillsTheGroupAndTheNextRequestStartsAFreshChild) {
  persistent_worker worker(
      {"/bin/sh", "-c",
       "while read line; do"
       "  if [ \"$line\" = hang ]; then sleep 60 & echo \"sleeper $!\" >&3; sleep 60; fi;"
       "  echo \"done $line\" >&3;"
       " done"});
  ASSERT_EQ(worker.exchange("warm", 2000ms, done_line).how, worker_outcome::ending::answered);
  const auto begun = std::chrono::steady_clock::now();
  const auto hung = worker.exchange("hang", 300ms, done_line);
  const double waited_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begun).count();
  EXPECT_EQ(hung.how, worker_outcome::ending::timed_out) << hung.describe();
  EXPECT_GE(hung.wall_s, 0.3);
  EXPECT_LT(waited_s, 2.0);
  EXPECT_GT(hung.peak_rss_bytes, 0U);
  EXPECT_FALSE(worker.running());
  ASSERT_EQ(hung.messages.size(), 1U);
  EXPECT_TRUE(ends_soon(word(hung.messages[0], 1))) << "the grandchild outlived the timeout";

  const auto next = worker.exchange("again", 2000ms, done_line);
  EXPECT_EQ(next.how, worker_outcome::ending::answered) << next.describe();
  EXPECT_EQ(next.messages, std::vector<std::string>{"done again"});
  EXPECT_EQ(worker.started(), 2);
}

TEST(WorkerProcessPersistent, AChildThatExitsMidRequestGivesItsCodeAndIsRestarted) {
  persistent_worker worker({"/bin/sh", "-c",
                            "while read line; do echo \"step $line\" >&3;"
                            " if [ \"$line\" = quit ]; then exit 5; fi;"
                            " echo \"done $line\" >&3; done"});
  ASSERT_EQ(worker.exchange("a", 2000ms, done_line).how, worker_outcome::ending::answered);
  const auto quit = worker.exchange("quit", 2000ms, done_line);
  EXPECT_EQ(quit.how, worker_outcome::ending::exited) << quit.describe();
  EXPECT_EQ(quit.exit_code, 5);
  EXPECT_EQ(quit.messages, std::vector<std::string>{"step quit"});
  EXPECT_FALSE(worker.running());
  const auto next = worker.exchange("b", 2000ms, done_line);
  EXPECT_EQ(next.how, worker_outcome::ending::answered) << next.describe();
  EXPECT_EQ(next.messages, (std::vector<std::string>{"step b", "done b"}));
  EXPECT_EQ(worker.started(), 2);
}

TEST(WorkerProcessPersistent, AChildKilledBySignalIsSignaled) {
  persistent_worker worker(
      {"/bin/sh", "-c", "while read line; do echo \"step $line\" >&3; kill -TERM $$; done"});
  const auto outcome = worker.exchange("a", 2000ms, done_line);
  EXPECT_EQ(outcome.how, worker_outcome::ending::signaled) << outcome.describe();
  EXPECT_EQ(outcome.signal, SIGTERM);
  EXPECT_EQ(outcome.messages, std::vector<std::string>{"step a"});
}

TEST(WorkerProcessPersistent, AChildThatLeftAfterItsAnswerIsReplacedForTheNextRequest) {
  persistent_worker worker({"/bin/sh", "-c", "read line; echo \"done $$\" >&3; exit 3"});
  const auto first = worker.exchange("a", 2000ms, done_line);
  ASSERT_EQ(first.how, worker_outcome::ending::answered) << first.describe();
  const std::string pid = word(first.messages.at(0), 1);
  for (int i = 0; i < 200 && process_state(pid) != "Z"; ++i) ::usleep(5000);
  ASSERT_EQ(process_state(pid), "Z");
  EXPECT_FALSE(worker.running());

  // The next request is answered by a fresh child, not charged with the old one's exit.
  const auto second = worker.exchange("b", 2000ms, done_line);
  EXPECT_EQ(second.how, worker_outcome::ending::answered) << second.describe();
  EXPECT_NE(word(second.messages.at(0), 1), pid);
  EXPECT_TRUE(process_state(pid).empty()) << "reaped";
  EXPECT_EQ(worker.started(), 2);
}

TEST(WorkerProcessPersistent, WritingToAChildThatClosedItsInputIsReportedNotASigpipe) {
  // SIGPIPE's default action, so that a write that raised it would end this test process.
  const auto previous = ::signal(SIGPIPE, SIG_DFL);
  persistent_worker worker(
      {"/bin/sh", "-c", "read line; echo \"done $$\" >&3; exec 0<&-; exec sleep 30"});
  const auto first = worker.exchange("a", 2000ms, done_line);
  ASSERT_EQ(first.how, worker_outcome::ending::answered) << first.describe();
  const std::string pid = word(first.messages.at(0), 1);
  // Its input has no reader left once the shell has become the sleep.
  for (int i = 0; i < 200 && process_state(pid) != "S"; ++i) ::usleep(5000);
  ::usleep(100000);

  const auto second = worker.exchange("b", 500ms, done_line);
  EXPECT_NE(second.how, worker_outcome::ending::answered) << second.describe();
  EXPECT_TRUE(process_state(pid).empty()) << "killed and reaped";
  // The SIGPIPE it raised was taken, and the mask is as it was.
  sigset_t pending, mask;
  ::sigpending(&pending);
  ::pthread_sigmask(SIG_SETMASK, nullptr, &mask);
  EXPECT_FALSE(::sigismember(&pending, SIGPIPE));
  EXPECT_FALSE(::sigismember(&mask, SIGPIPE));
  ::signal(SIGPIPE, previous);
}

TEST(WorkerProcessPersistent, TheDestructorLeavesNoProcessBehind) {
  std::string child, sleeper;
  {
    persistent_worker worker(
        {"/bin/sh", "-c", "while read line; do sleep 60 & echo \"done $$ $!\" >&3; done"});
    const auto outcome = worker.exchange("a", 2000ms, done_line);
    ASSERT_EQ(outcome.how, worker_outcome::ending::answered) << outcome.describe();
    child = word(outcome.messages.at(0), 1);
    sleeper = word(outcome.messages.at(0), 2);
    ASSERT_FALSE(process_state(sleeper).empty());
    ASSERT_NE(process_state(sleeper), "Z");
  }
  EXPECT_TRUE(process_state(child).empty()) << "the child was not reaped";
  EXPECT_TRUE(ends_soon(sleeper)) << "its background process outlived it";
}

TEST(WorkerProcessPersistent, TheDestructorKillsAChildThatIgnoresItsClosedInput) {
  std::string child;
  const auto begun = std::chrono::steady_clock::now();
  {
    persistent_worker worker({"/bin/sh", "-c", "read line; echo \"done $$\" >&3; exec sleep 60"});
    const auto outcome = worker.exchange("a", 2000ms, done_line);
    ASSERT_EQ(outcome.how, worker_outcome::ending::answered) << outcome.describe();
    child = word(outcome.messages.at(0), 1);
  }
  const double waited_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begun).count();
  EXPECT_TRUE(process_state(child).empty());
  EXPECT_LT(waited_s, 4.0);  // its 2 s of grace, not its 60 s of sleep
}

TEST(WorkerProcessPersistent, NoProgramIsNotStarted) {
  persistent_worker worker({});
  const auto outcome = worker.exchange("a", 1000ms, done_line);
  EXPECT_EQ(outcome.how, worker_outcome::ending::not_started);
  EXPECT_EQ(worker.started(), 0);
}

}  // namespace
}  // namespace blaster
