// The per-GPU lock: a second holder waits until the first releases it or dies, and is told who
// holds it; the device's name comes from CUDA_VISIBLE_DEVICES.
#include "core/device_lock.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

namespace blaster {
namespace {

using namespace std::chrono_literals;

class DeviceLock : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("blaster-lock-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    ::setenv("BLASTER_LOCK_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("BLASTER_LOCK_DIR");
    std::filesystem::remove_all(dir_);
  }
  // A child process that takes the lock, says so through a pipe, and holds it for `hold`
  // (forever when zero).
  pid_t holder(std::chrono::milliseconds hold) {
    int ready[2];
    if (::pipe(ready) != 0) return -1;
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(ready[0]);
      {
        const device_lock lock("GPU-1234", {});
        const char one = 1;
        static_cast<void>(::write(ready[1], &one, 1));
        if (hold.count() == 0) ::pause();
        std::this_thread::sleep_for(hold);
      }
      ::_exit(0);
    }
    ::close(ready[1]);
    char one = 0;
    static_cast<void>(::read(ready[0], &one, 1));
    ::close(ready[0]);
    return pid;
  }
  std::filesystem::path dir_;
};

TEST_F(DeviceLock, ASecondHolderWaitsUntilTheFirstReleasesIt) {
  const pid_t first = holder(400ms);
  ASSERT_GT(first, 0);
  std::string told;
  const auto start = std::chrono::steady_clock::now();
  {
    const device_lock lock("GPU-1234", [&](const std::string& m) { told = m; });
    EXPECT_GE(std::chrono::steady_clock::now() - start, 250ms);
    EXPECT_TRUE(lock.waited());
  }
  EXPECT_NE(told.find("GPU GPU-1234 is in use by blaster process " + std::to_string(first)),
            std::string::npos)
      << told;
  int status = 0;
  ::waitpid(first, &status, 0);
  // Free now: no wait.
  const device_lock again("GPU-1234", [](const std::string&) { ADD_FAILURE() << "waited"; });
  EXPECT_FALSE(again.waited());
}

TEST_F(DeviceLock, AHolderThatDiesReleasesIt) {
  const pid_t first = holder(0ms);
  ASSERT_GT(first, 0);
  std::thread killer([&] {
    std::this_thread::sleep_for(200ms);
    ::kill(first, SIGKILL);
  });
  const device_lock lock("GPU-1234", {});
  EXPECT_TRUE(lock.waited());
  killer.join();
  int status = 0;
  ::waitpid(first, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status));
}

TEST_F(DeviceLock, OtherGpusAreNotHeld) {
  const pid_t first = holder(0ms);
  ASSERT_GT(first, 0);
  const device_lock other("GPU-5678", {});
  EXPECT_FALSE(other.waited());
  ::kill(first, SIGKILL);
  ::waitpid(first, nullptr, 0);
}

TEST(DeviceName, IsTheFirstVisibleDevice) {
  ::setenv("CUDA_VISIBLE_DEVICES", "GPU-ab12,1", 1);
  EXPECT_EQ(visible_device(), "GPU-ab12");
  ::setenv("CUDA_VISIBLE_DEVICES", "1", 1);
  EXPECT_EQ(visible_device(), "1");
  // Each entry without its blanks, as a worker shown one of them names it.
  ::setenv("CUDA_VISIBLE_DEVICES", " 2 ,GPU-cd", 1);
  EXPECT_EQ(visible_device(), "2");
  EXPECT_EQ(visible_devices(), (std::vector<std::string>{"2", "GPU-cd"}));
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(visible_device(), "0");
  ::setenv("BLASTER_LOCK_DIR", "/locks", 1);
  EXPECT_EQ(device_lock_path("MIG-1/2"), "/locks/blaster-gpu-MIG-1_2.lock");
  ::unsetenv("BLASTER_LOCK_DIR");
  EXPECT_EQ(device_lock_path("0"), "/tmp/blaster-gpu-0.lock");
}

}  // namespace
}  // namespace blaster
