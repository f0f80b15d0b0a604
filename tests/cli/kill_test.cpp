// bench killed at random moments: every run it left behind is marked interrupted by the next
// command, none is exported unless asked, and no half-written folder stays.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace blaster {
namespace {

namespace fs = std::filesystem;

// Starts `blaster --home HOME bench --task rmsnorm` with its output discarded; returns its pid.
pid_t start_bench(const fs::path& home) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
    ::execl(BLASTER_BINARY, BLASTER_BINARY, "--root", BLASTER_SOURCE_DIR, "--home", home.c_str(),
            "bench", "--task", "rmsnorm", "--samples", "10", "--budget", "0.1",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

int wait_for(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

std::string capture(const std::string& command, int& exit_code) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> chunk{};
  while (std::size_t n = std::fread(chunk.data(), 1, chunk.size(), pipe))
    out.append(chunk.data(), n);
  const int status = ::pclose(pipe);
  exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

TEST(KilledBench, EveryRunItLeftIsInterruptedAndNotExportedUnlessAsked) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("blaster-kill-test-{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path home = dir / "home";

  // One whole run fills the compile cache; a second says how long a run takes here.
  wait_for(start_bench(home));
  const auto started = std::chrono::steady_clock::now();
  wait_for(start_bench(home));
  const auto whole = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);
  ASSERT_GT(whole.count(), 0);

  std::mt19937 random(std::random_device{}());
  std::uniform_int_distribution<long> moment(0, whole.count());
  for (int i = 0; i < 20; ++i) {
    const pid_t pid = start_bench(home);
    std::this_thread::sleep_for(std::chrono::milliseconds(moment(random)));
    ::kill(pid, SIGKILL);
    wait_for(pid);
  }

  int code = -1;
  const std::string listed = capture(
      fmt::format("'{}' --home '{}' --json runs --limit 0", BLASTER_BINARY, home.string()), code);
  ASSERT_EQ(code, 0) << listed;
  const auto runs = nlohmann::json::parse(listed);
  int interrupted = 0;
  for (const auto& run : runs) {
    const std::string status = run.at("status");
    EXPECT_NE(status, "running") << "run " << run.at("id") << " was left running";
    if (status != "interrupted") continue;
    ++interrupted;
    const fs::path out = dir / fmt::format("bundle-{}", run.at("id").get<long>());
    const std::string command =
        fmt::format("'{}' --home '{}' export {} --out '{}' 2>&1", BLASTER_BINARY, home.string(),
                    run.at("id").get<long>(), out.string());
    const std::string refused = capture(command, code);
    EXPECT_EQ(code, 2) << refused;
    EXPECT_NE(refused.find("interrupted"), std::string::npos) << refused;
    EXPECT_FALSE(fs::exists(out));
    const std::string exported = capture(command + " --allow-incomplete", code);
    EXPECT_EQ(code, 0) << exported;
  }
  std::printf("20 benches killed; %d left an interrupted run\n", interrupted);
  EXPECT_GT(interrupted, 0) << "no kill landed inside a run; nothing was tested";
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    EXPECT_EQ(entry.path().filename().string().find(".partial"), std::string::npos) << entry.path();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace blaster
