#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "benchmarking/bench_runner.hpp"

namespace blaster::cli {

// What bench and profile run: a task, its candidates, the target, the seed and the case.
struct task_flags {
  std::string task;
  std::vector<std::filesystem::path> candidates;
  std::string arch;
  std::optional<std::uint64_t> seed;
  std::string case_name;
};

// --task, --candidate, --arch, --seed and --case; `case_help` says what the command does with it.
void add_task_flags(CLI::App& command, task_flags& flags, const std::string& case_help);

// The flags into the options, and as the recorded command line spells them: "blaster NAME --task
// rmsnorm --candidate f.cu".
void apply(const task_flags& flags, bench_options& options);
std::string task_arguments(const std::string& command, const task_flags& flags);

}  // namespace blaster::cli
