#pragma once

// Runs the blaster binary the way a user does, for the end-to-end tests of the command.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "core/file_io.hpp"

namespace blaster::testing {

struct command_result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// `blaster --home HOME ARGS`, run from `cwd`; stderr goes through `err_file`.
inline command_result run_blaster(const std::filesystem::path& cwd,
                                  const std::filesystem::path& home, const std::string& args,
                                  const std::filesystem::path& err_file) {
  const std::string command = fmt::format("cd '{}' && '{}' --home '{}' {} 2>'{}'", cwd.string(),
                                          BLASTER_BINARY, home.string(), args, err_file.string());
  command_result result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> chunk{};
  while (std::size_t n = std::fread(chunk.data(), 1, chunk.size(), pipe)) {
    result.out.append(chunk.data(), n);
  }
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.err = read_file(err_file);
  return result;
}

}  // namespace blaster::testing
