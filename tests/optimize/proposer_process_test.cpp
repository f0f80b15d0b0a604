// A proposer is supervised like a worker: its replies come back line by line, and a proposer
// that hangs, floods, exits or never reads ends with a reason instead of hanging blaster.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "optimize/proposer_process.hpp"
#include "optimize/temp_home.hpp"

namespace blaster {
namespace {

using namespace std::chrono_literals;

class ProposerProcess : public ::testing::Test {
 protected:
  testing::temp_home home_{"proposer"};
  std::filesystem::path log() const { return home_.path() / "proposer.log"; }
};

TEST_F(ProposerProcess, AnswersEachRequestWithOneLine) {
  proposer_process p("while read -r line; do echo \"got $line\"; done", log());
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
                     log());
  const auto first = p.ask("a", 5000ms, 1024);
  ASSERT_TRUE(first.line) << first.why;
  EXPECT_EQ(*first.line, "re a");
  std::this_thread::sleep_for(100ms);  // "extra" is written before the next request
  const auto second = p.ask("b", 5000ms, 1024);
  ASSERT_TRUE(second.line) << second.why;
  EXPECT_EQ(*second.line, "re b");
}

TEST_F(ProposerProcess, AHangEndsAtTheDeadline) {
  proposer_process p("read -r line; sleep 60", log());
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
  proposer_process p("read -r line; echo dying >&2; exit 3", log());
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
  proposer_process p("read -r line; kill -SEGV $$", log());
  const auto a = p.ask("x", 5000ms, 1024);
  EXPECT_EQ(a.ended, "proposer_exited");
  EXPECT_NE(a.why.find("signal 11"), std::string::npos) << a.why;
}

TEST_F(ProposerProcess, AFloodPastTheCapIsCutOff) {
  // An endless line: blaster reads no further than the cap, then kills it.
  proposer_process p("read -r line; yes | tr -d '\\n'", log());
  const auto a = p.ask("x", 10000ms, 4096);
  EXPECT_FALSE(a.line);
  EXPECT_EQ(a.ended, "proposer_flood");
  EXPECT_NE(a.why.find("4096 bytes"), std::string::npos) << a.why;
}

TEST_F(ProposerProcess, AProposerThatNeverReadsCannotBlockTheRequest) {
  // A request larger than the pipe's buffer, to a proposer that does not read.
  proposer_process p("sleep 60", log());
  const auto started = std::chrono::steady_clock::now();
  const auto a = p.ask(std::string(1 << 20, 'r'), 500ms, 1024);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  EXPECT_FALSE(a.line);
  EXPECT_EQ(a.ended, "proposer_timeout");
}

TEST_F(ProposerProcess, AProposerThatExitedAtOnceDoesNotKillBlasterWithSigpipe) {
  proposer_process p("exit 0", log());
  std::this_thread::sleep_for(200ms);
  const auto a = p.ask(std::string(1 << 20, 'r'), 5000ms, 1024);
  EXPECT_FALSE(a.line);
  EXPECT_EQ(a.ended, "proposer_exited");
  EXPECT_NE(a.why.find("exited with code 0"), std::string::npos) << a.why;
}

TEST_F(ProposerProcess, TheWholeGroupIsKilled) {
  // A child the proposer started must not outlive it.
  const auto marker = home_.path() / "grandchild";
  {
    proposer_process p("(sleep 1; touch " + marker.string() + ") & read -r line; sleep 60",
                       log());
    const auto a = p.ask("x", 200ms, 1024);
    EXPECT_EQ(a.ended, "proposer_timeout");
  }
  std::this_thread::sleep_for(1500ms);
  EXPECT_FALSE(std::filesystem::exists(marker));
}

}  // namespace
}  // namespace blaster
