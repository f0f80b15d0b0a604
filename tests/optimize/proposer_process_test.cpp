// A proposer is supervised like a worker: its replies come back line by line, and a proposer
// that hangs, floods, exits or never reads ends with a reason instead of hanging blaster.
#include <gtest/gtest.h>

#include <signal.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <thread>

#include "core/file_io.hpp"
#include "optimize/proposer_process.hpp"
#include "optimize/temp_home.hpp"

namespace blaster {
namespace {

using namespace std::chrono_literals;

class ProposerProcess : public ::testing::Test {
 protected:
  testing::temp_home home_{"proposer"};
  std::filesystem::path log() const { return home_.path() / "proposer.log"; }
  // The built blaster keeps the box: this test binary has no `__proposer_box`.
  static proposer_box_options box() {
    proposer_box_options options;
    options.keeper = BLASTER_BINARY;
    return options;
  }
};

TEST_F(ProposerProcess, AnswersEachRequestWithOneLine) {
  proposer_process p("while read -r line; do echo \"got $line\"; done", log(), box());
  for (const char* request : {"one", "two", "three"}) {
    const auto a = p.ask(request, 5000ms, 1024);
    ASSERT_TRUE(a.line) << a.why;
    EXPECT_EQ(*a.line, std::string("got ") + request);
  }
  EXPECT_TRUE(p.running());
}

TEST_F(ProposerProcess, LinesNobodyAskedForAreDropped) {
  // Two lines per request: the second is not the answer to the next request.
  proposer_process p("while read -r line; do echo \"re $line\"; echo extra; sleep 0.2; done",
                     log(), box());
  const auto first = p.ask("a", 5000ms, 1024);
  ASSERT_TRUE(first.line) << first.why;
  EXPECT_EQ(*first.line, "re a");
  std::this_thread::sleep_for(100ms);  // "extra" is written before the next request
  const auto second = p.ask("b", 5000ms, 1024);
  ASSERT_TRUE(second.line) << second.why;
  EXPECT_EQ(*second.line, "re b");
}

TEST_F(ProposerProcess, AHangEndsAtTheDeadline) {
  proposer_process p("read -r line; sleep 60", log(), box());
  const auto started = std::chrono::steady_clock::now();
  const auto a = p.ask("x", 300ms, 1024);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  EXPECT_FALSE(a.line);
  EXPECT_EQ(a.ended, "proposer_timeout");
  EXPECT_NE(a.why.find("no reply within 0.3 s"), std::string::npos) << a.why;
  EXPECT_FALSE(p.running());
  // Gone for good: the next ask says so at once.
  const auto again = p.ask("y", 5000ms, 1024);
  EXPECT_FALSE(again.line);
  EXPECT_EQ(again.ended, "proposer_timeout");
}

TEST_F(ProposerProcess, AnExitBeforeReplyingIsReportedWithItsCode) {
  proposer_process p("read -r line; echo dying >&2; exit 3", log(), box());
  const auto a = p.ask("x", 5000ms, 1024);
  EXPECT_FALSE(a.line);
  EXPECT_EQ(a.ended, "proposer_exited");
  EXPECT_NE(a.why.find("exited with code 3"), std::string::npos) << a.why;
  std::ifstream in(log());
  std::string logged;
  std::getline(in, logged);
  EXPECT_EQ(logged, "dying");  // its standard error went to the log
}

TEST_F(ProposerProcess, ACrashIsReportedWithItsSignal) {
  proposer_process p("read -r line; kill -SEGV $$", log(), box());
  const auto a = p.ask("x", 5000ms, 1024);
  EXPECT_EQ(a.ended, "proposer_exited");
  EXPECT_NE(a.why.find("signal 11"), std::string::npos) << a.why;
}

TEST_F(ProposerProcess, AFloodPastTheCapIsCutOff) {
  // An endless line: blaster reads no further than the cap, then kills it.
  proposer_process p("read -r line; yes | tr -d '\\n'", log(), box());
  const auto a = p.ask("x", 10000ms, 4096);
  EXPECT_FALSE(a.line);
  EXPECT_EQ(a.ended, "proposer_flood");
  EXPECT_NE(a.why.find("4096 bytes"), std::string::npos) << a.why;
}

TEST_F(ProposerProcess, AProposerThatNeverReadsCannotBlockTheRequest) {
  // A request larger than the pipe's buffer, to a proposer that does not read.
  proposer_process p("sleep 60", log(), box());
  const auto started = std::chrono::steady_clock::now();
  const auto a = p.ask(std::string(1 << 20, 'r'), 500ms, 1024);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  EXPECT_FALSE(a.line);
  EXPECT_EQ(a.ended, "proposer_timeout");
}

TEST_F(ProposerProcess, AProposerThatExitedAtOnceDoesNotKillBlasterWithSigpipe) {
  proposer_process p("exit 0", log(), box());
  std::this_thread::sleep_for(200ms);
  const auto a = p.ask(std::string(1 << 20, 'r'), 5000ms, 1024);
  EXPECT_FALSE(a.line);
  EXPECT_EQ(a.ended, "proposer_exited");
  EXPECT_NE(a.why.find("exited with code 0"), std::string::npos) << a.why;
}

TEST_F(ProposerProcess, TheWholeGroupIsKilled) {
  // A child the proposer started must not outlive it.
  pid_t child = 0;
  {
    proposer_process p("read -r line; sleep 60 & echo $!; sleep 60", log(), box());
    const auto a = p.ask("x", 5000ms, 1024);
    ASSERT_TRUE(a.line) << a.why;
    child = std::stoi(*a.line);
    EXPECT_EQ(::kill(child, 0), 0) << "it runs while the proposer does";
  }
  EXPECT_EQ(::kill(child, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

// A proposer that exits while a process it started still holds its output: its exit ends the
// session at once, not when the reply's deadline passes.
TEST_F(ProposerProcess, AnExitIsSeenWhileABackgroundChildHoldsItsOutput) {
  proposer_process p("read -r line; sleep 60 & exit 4", log(), box());
  const auto started = std::chrono::steady_clock::now();
  const auto a = p.ask("x", 60000ms, 1024);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  EXPECT_FALSE(a.line);
  EXPECT_EQ(a.ended, "proposer_exited");
  EXPECT_NE(a.why.find("exited with code 4"), std::string::npos) << a.why;
}

// A reply written just before the exit is still the reply.
TEST_F(ProposerProcess, AReplyWrittenBeforeTheExitIsRead) {
  proposer_process p("read -r line; sleep 60 & echo last; exit 0", log(), box());
  const auto a = p.ask("x", 60000ms, 1024);
  ASSERT_TRUE(a.line) << a.why;
  EXPECT_EQ(*a.line, "last");
  const auto after = p.ask("y", 60000ms, 1024);
  EXPECT_EQ(after.ended, "proposer_exited");
  EXPECT_NE(after.why.find("exited with code 0"), std::string::npos) << after.why;
}

TEST_F(ProposerProcess, ItsLogIsCapped) {
  auto options = box();
  options.max_log_bytes = 64 * 1024;
  {
    proposer_process p("read -r line; head -c 1000000 /dev/zero | tr '\\0' x >&2; echo done",
                       log(), options);
    const auto a = p.ask("x", 20000ms, 1024);
    ASSERT_TRUE(a.line) << a.why;
    EXPECT_EQ(*a.line, "done");
    p.stop();
    EXPECT_EQ(p.record().at("ended").at("log_dropped_bytes"), 1000000 - 64 * 1024);
  }
  const std::string logged = read_file(log());
  EXPECT_LT(logged.size(), 64U * 1024U + 512U);
  EXPECT_EQ(logged.substr(0, 4), "xxxx");
  EXPECT_NE(logged.find("the rest is counted and dropped"), std::string::npos);
}

}  // namespace
}  // namespace blaster
