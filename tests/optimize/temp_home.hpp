#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>

namespace blaster::testing {

// A fresh folder per test, removed afterwards.
class temp_home {
 public:
  explicit temp_home(const std::string& name) {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("blaster-optimize-" + name + "-" + std::to_string(::getpid()) + "-" +
             std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~temp_home() { std::filesystem::remove_all(path_); }
  temp_home(const temp_home&) = delete;
  temp_home& operator=(const temp_home&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace blaster::testing
