#pragma once

#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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
  std::string format = "table";               // --format: table, json, md or csv; --json is "json"
  bool json = false;                          // format is json
  bool quiet = false;
};

// Refuses a --format that the command has no renderer for, naming those it has (input_error).
void require_format(const global_options& options, std::initializer_list<std::string_view> known,
                    std::string_view command);
void require_format(const global_options& options, const std::vector<std::string_view>& known,
                    std::string_view command);

// The --format values a subcommand prints, one rule for all: a command whose output is a
// result_table prints every format; the others print a table and JSON (the portfolio also its
// Markdown report). main refuses any other before the command runs.
std::vector<std::string_view> formats_of(std::string_view command);

// --root, else $BLASTER_ROOT, else the nearest folder at or above the working directory that
// holds tasks/, else the source tree blaster was built from.
std::filesystem::path resolve_root(const global_options& options);

}  // namespace blaster::cli
