// The proposer's box against a hostile proposer: it sees nothing of blaster's environment, it
// cannot write outside its own folder (where the kernel has Landlock), it cannot signal blaster
// (where Landlock scopes signals), and nothing it starts outlives the session, or blaster,
// however blaster ends. An honest proposer that does the same things inside its folder works.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "core/file_confinement.hpp"
#include "core/file_io.hpp"
#include "optimize/proposer_process.hpp"
#include "optimize/temp_home.hpp"

namespace blaster {
namespace {

using namespace std::chrono_literals;

proposer_box_options box(std::vector<std::string> environment = {}) {
  return {.keeper = BLASTER_BINARY, .environment = std::move(environment)};
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

bool gone(pid_t pid) { return ::kill(pid, 0) == -1 && errno == ESRCH; }

// Waits until every pid is gone, for at most `patience`.
bool all_gone(const std::vector<pid_t>& pids, std::chrono::milliseconds patience) {
  const auto until = std::chrono::steady_clock::now() + patience;
  for (;;) {
    bool any = false;
    for (const pid_t p : pids) any = any || !gone(p);
    if (!any) return true;
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(20ms);
  }
}

class ProposerBox : public ::testing::Test {
 protected:
  testing::temp_home home_{"box"};
  std::filesystem::path log() const { return home_.path() / "proposer.log"; }
};

TEST_F(ProposerBox, ItsEnvironmentHoldsNothingOfBlasters) {
  ::setenv("BLASTER_HOME", "/secret/blaster-home", 1);
  ::setenv("BLASTER_PROPOSER_SECRET", "no", 1);
  ::setenv("SOME_TOKEN", "not passed", 1);
  ::setenv("OPENAI_API_KEY", "passed", 1);
  std::string folder;
  {
    proposer_process p(
        "read -r line; printf '%s|%s|%s\\n' \"$(pwd)\" \"$(ls -A | wc -l)\" \"$(env | sort | tr "
        "'\\n' ' ')\"",
        log(), box({"OPENAI_API_KEY"}));
    const auto a = p.ask("x", 10000ms, 1 << 20);
    ASSERT_TRUE(a.line) << a.why;
    const std::string& reply = *a.line;
    folder = reply.substr(0, reply.find('|'));
    const std::string rest = reply.substr(reply.find('|') + 1);
    EXPECT_EQ(rest.substr(0, rest.find('|')), "0") << "its folder starts empty";
    const std::string env = rest.substr(rest.find('|') + 1);
    EXPECT_EQ(env.find("BLASTER_"), std::string::npos) << env;
    EXPECT_EQ(env.find("SOME_TOKEN"), std::string::npos) << env;
    EXPECT_EQ(env.find(home_.path().string()), std::string::npos) << env;
    EXPECT_NE(env.find("OPENAI_API_KEY=passed"), std::string::npos) << env;
    EXPECT_NE(env.find("HOME=" + folder + " "), std::string::npos) << env;
    EXPECT_NE(env.find("TMPDIR=" + folder + " "), std::string::npos) << env;
    EXPECT_NE(env.find("PATH="), std::string::npos) << env;
    EXPECT_EQ(folder.find(home_.path().string()), std::string::npos);
    EXPECT_TRUE(std::filesystem::is_directory(folder));
    const auto names = p.record().at("environment");
    EXPECT_NE(std::find(names.begin(), names.end(), "OPENAI_API_KEY"), names.end());
  }
  EXPECT_FALSE(std::filesystem::exists(folder)) << "its folder goes with the session";
  for (const char* name : {"BLASTER_HOME", "BLASTER_PROPOSER_SECRET", "SOME_TOKEN",
                           "OPENAI_API_KEY"}) {
    ::unsetenv(name);
  }
}

TEST_F(ProposerBox, BlastersOwnVariablesCannotBeNamed) {
  EXPECT_FALSE(refused_proposer_variable("BLASTER_HOME").empty());
  EXPECT_FALSE(refused_proposer_variable("BLASTER_ROOT").empty());
  EXPECT_FALSE(refused_proposer_variable("HOME").empty());
  EXPECT_FALSE(refused_proposer_variable("A=B").empty());
  EXPECT_FALSE(refused_proposer_variable("").empty());
  EXPECT_TRUE(refused_proposer_variable("OPENAI_API_KEY").empty());
  const auto env = proposer_environment(
      {"PATH=/bin", "LC_ALL=C", "BLASTER_HOME=/h", "KEY=v", "OTHER=w"}, "/box", {"KEY",
                                                                                 "BLASTER_HOME"});
  EXPECT_EQ(env, (std::vector<std::string>{"PATH=/bin", "LC_ALL=C", "KEY=v", "HOME=/box",
                                           "TMPDIR=/box"}));
}

// A hostile proposer that found the home tries to change it; an honest one writes in its own
// folder. Only the honest writes happen.
TEST_F(ProposerBox, WritesOutsideItsFolderAreRefused) {
  if (!file_confinement_available()) GTEST_SKIP() << "this kernel has no Landlock";
  const auto home = home_.path() / "home";
  const auto checkout = home_.path() / "checkout";
  std::filesystem::create_directories(home);
  std::filesystem::create_directories(checkout);
  write_file_atomically(home / "blaster.db", "the store");
  write_file_atomically(checkout / "init.cu", "the baseline");
  const std::string h = home.string();
  const std::string c = checkout.string();
  // Each attempt prints 0 where it worked.
  const std::string attempts =
      "t() { \"$@\" 2>/dev/null; printf '%s ' $?; }; "
      "t sh -c 'echo forged >> " + h + "/blaster.db'; "
      "t sh -c ': > " + h + "/blaster.db'; "
      "t truncate -s 0 " + h + "/blaster.db; "
      "t rm -f " + h + "/blaster.db; "
      "t mv " + h + "/blaster.db " + h + "/moved.db; "
      "t touch " + h + "/dropped; "
      "t mkdir " + h + "/folder; "
      "t ln -s " + h + "/blaster.db " + h + "/link; "
      "t sh -c 'echo x > " + c + "/init.cu'; "
      "t touch " + c + "/dropped; "
      "t sqlite3 " + h + "/blaster.db 'CREATE TABLE forged(x)'; "
      "printf '| '; "
      "t sh -c 'echo mine > notes && cat notes > /dev/null'; "
      "t mkdir -p sub/dir; "
      "t mv notes sub/dir/notes; "
      "t sh -c 'f=$(mktemp) && echo x > \"$f\"'; "
      "t sh -c 'echo x > /dev/null'; "
      "t sh -c 'cat " + h + "/blaster.db > /dev/null'; "
      "echo";
  proposer_process p("read -r line; " + attempts, log(), box());
  const auto a = p.ask("x", 20000ms, 1 << 20);
  ASSERT_TRUE(a.line) << a.why;
  const auto bar = a.line->find('|');
  ASSERT_NE(bar, std::string::npos) << *a.line;
  for (const auto& status : words(a.line->substr(0, bar))) {
    EXPECT_NE(status, "0") << "a write outside its folder worked: " << *a.line;
  }
  for (const auto& status : words(a.line->substr(bar + 1))) {
    EXPECT_EQ(status, "0") << "an honest step failed: " << *a.line;
  }
  EXPECT_EQ(read_file(home / "blaster.db"), "the store");
  EXPECT_EQ(read_file(checkout / "init.cu"), "the baseline");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(home), {}), 1);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(checkout), {}), 1);
  const auto& confinement = p.record().at("confinement");
  EXPECT_EQ(confinement.at("confined"), true);
  EXPECT_GE(confinement.at("landlock_abi").get<int>(), 1);
}

TEST_F(ProposerBox, ItCannotSignalBlaster) {
  if (file_confinement_abi() < 6) GTEST_SKIP() << "this kernel's Landlock does not scope signals";
  // SIGURG: harmless if it arrived, since its default is to be ignored.
  proposer_process p(fmt::format("read -r line; kill -URG {} 2>/dev/null; echo $?", ::getpid()),
                     log(), box());
  const auto a = p.ask("x", 10000ms, 1024);
  ASSERT_TRUE(a.line) << a.why;
  EXPECT_NE(*a.line, "0");
  EXPECT_EQ(p.record().at("confinement").at("signals"), "to its own processes only");
}

// What the proposer starts: a background child in its group, an orphan of a subshell, and a
// process that left its group and session (setsid) with a child of its own.
constexpr const char* spawner =
    "read -r line; sleep 300 & a=$!; (sleep 300 & echo $! > orphan); "
    "setsid sh -c 'sleep 300 & echo $! > daemon; exec sleep 300' & s=$!; "
    "while [ ! -s daemon ] || [ ! -s orphan ]; do sleep 0.05; done; "
    "echo $$ $a $(cat orphan) $s $(cat daemon); sleep 300";

std::vector<pid_t> pids_in(const std::string& line) {
  std::vector<pid_t> pids;
  for (const auto& w : words(line)) pids.push_back(std::stoi(w));
  return pids;
}

TEST_F(ProposerBox, NothingItStartsOutlivesTheSession) {
  std::vector<pid_t> pids;
  {
    proposer_process p(spawner, log(), box());
    const auto a = p.ask("x", 20000ms, 1024);
    ASSERT_TRUE(a.line) << a.why;
    pids = pids_in(*a.line);
    ASSERT_EQ(pids.size(), 5U) << *a.line;
    for (const pid_t pid : pids) EXPECT_FALSE(gone(pid)) << pid;
    p.stop();
    const auto& ended = p.record().at("ended");
    EXPECT_EQ(ended.at("by"), "blaster ended the session");
    EXPECT_GE(ended.at("moved_out").get<int>(), 1) << ended.dump();
    EXPECT_EQ(ended.at("left_running"), 0);
  }
  EXPECT_TRUE(all_gone(pids, 2000ms));
}

// An honest proposer exits by itself: what it left running goes with it, and nothing is said
// to have left its group.
TEST_F(ProposerBox, WhatAnExitedProposerLeftIsKilled) {
  proposer_process p("read -r line; sleep 300 & echo $!; exit 0", log(), box());
  const auto a = p.ask("x", 20000ms, 1024);
  ASSERT_TRUE(a.line) << a.why;
  const pid_t child = std::stoi(*a.line);
  EXPECT_EQ(p.ask("y", 20000ms, 1024).ended, "proposer_exited");
  EXPECT_TRUE(all_gone({child}, 2000ms));
  EXPECT_EQ(p.record().at("ended").at("moved_out"), 0);
  EXPECT_EQ(p.record().at("ended").at("by"), "it ended by itself");
}

// blaster ended by a signal (kill -9 included), with no chance to clean up: the keeper sees its
// channel close and kills everything the proposer started.
class ProposerBoxOwnerKilled : public ProposerBox, public ::testing::WithParamInterface<int> {};

TEST_P(ProposerBoxOwnerKilled, NothingItStartedSurvives) {
  int channel[2];
  ASSERT_EQ(::pipe(channel), 0);
  const pid_t owner = ::fork();
  if (owner == 0) {
    // Stands in for blaster: starts the proposer, passes its pids on, and waits to be killed.
    ::close(channel[0]);
    proposer_process p(spawner, log(), box());
    const auto a = p.ask("x", 20000ms, 1024);
    const std::string line = (a.line ? *a.line : std::string("failed")) + "\n";
    static_cast<void>(::write(channel[1], line.data(), line.size()));
    ::pause();
    ::_exit(0);
  }
  ::close(channel[1]);
  std::string line;
  char c = 0;
  while (::read(channel[0], &c, 1) == 1 && c != '\n') line.push_back(c);
  ::close(channel[0]);
  const std::vector<pid_t> pids = pids_in(line == "failed" ? "" : line);
  ::kill(owner, GetParam());
  int status = 0;
  ::waitpid(owner, &status, 0);
  ASSERT_EQ(pids.size(), 5U) << line;
  EXPECT_TRUE(all_gone(pids, 5000ms)) << "signal " << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Signals, ProposerBoxOwnerKilled,
                         ::testing::Values(SIGKILL, SIGTERM, SIGINT),
                         [](const auto& info) { return std::string(::sigabbrev_np(info.param)); });

}  // namespace
}  // namespace blaster
