#pragma once

// A fresh folder under the temporary directory that only this user can enter (mkdtemp makes it
// 0700), removed with everything in it when the object goes: scratch that no other user can read
// or plant files in, and that no exit path leaves behind.

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace blaster {

class private_folder {
 public:
  // `prefix` names the folder for whoever lists the temporary directory: blaster-compile-XXXXXX.
  explicit private_folder(std::string_view prefix) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      BLASTER_THROW("mkdtemp({}): {}", pattern, std::strerror(errno));
    }
    path_ = pattern;
  }
  ~private_folder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  private_folder(const private_folder&) = delete;
  private_folder& operator=(const private_folder&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace blaster
