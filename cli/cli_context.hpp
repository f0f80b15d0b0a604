#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace blaster::cli {

// Exit codes, as `blaster --help` documents them.
enum exit_code : int {
  exit_ok = 0,
  exit_failure = 1,    // the machine or the harness failed (CUDA, I/O, SQLite)
  exit_bad_input = 2,  // a flag, task, candidate or file is wrong; the message says how
  exit_no_gpu = 3,     // the command needs a GPU and there is none
};

// Options every subcommand shares.
struct global_options {
  std::optional<std::filesystem::path> root;  // holds tasks/ and kernels/
  std::optional<std::filesystem::path> home;  // the store
  bool json = false;
  bool quiet = false;
};

// --root, else $BLASTER_ROOT, else the nearest folder at or above the working directory that
// holds tasks/, else the source tree blaster was built from.
std::filesystem::path resolve_root(const global_options& options);

}  // namespace blaster::cli
