#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "benchmarking/report/case_summary.hpp"
#include "benchmarking/runner/bench_runner.hpp"
#include "cli/cli_context.hpp"
#include "evidence/result_table.hpp"

namespace blaster::cli {

// What bench and profile run: a task, its candidates, the target, the seed and the case.
struct task_flags {
  std::string task;
  std::vector<std::filesystem::path> candidates;
  std::string arch;
  std::optional<std::uint64_t> seed;
  std::string case_name;
  std::optional<double> deadline_s;  // --deadline, which each command explains its own way
  std::string gpus;                  // --gpus, for the commands that take it
};

// --task, --candidate, --arch, --seed and --case; `case_help` says what the command does with it.
void add_task_flags(CLI::App& command, task_flags& flags, const std::string& case_help);

// --gpus into `gpus`: `help` says what the command spreads over them.
void add_gpus_flag(CLI::App& command, std::string& gpus, const std::string& help);

// The flags into the options, and as the recorded command line spells them: "blaster NAME --task
// rmsnorm --candidate f.cu".
void apply(const task_flags& flags, bench_options& options);
std::string task_arguments(const std::string& command, const task_flags& flags);

// The cases a --cases list names ("all", or names separated by commas) with the weights
// task.json gives them; an unknown or repeated name is an input_error that lists the cases.
std::vector<timed_case> cases_named(const bench_options& options, const std::string& list);

// Runs `options` on the store of --home and prints the report: its JSON with --json, else
// `table` of it in --format (nothing where `table` gives none). Without a GPU the output carries
// the no_gpu error, stderr says in one line what `needs_gpu` ("counters need a GPU"), and the
// exit status is exit_no_gpu.
int run_and_print(const global_options& global, const bench_options& options,
                  const std::string& needs_gpu,
                  const std::function<std::optional<result_table>(const bench_report&)>& table);
// The printing half of run_and_print, for a report already run.
int print_report(const global_options& global, const bench_report& report,
                 const std::string& needs_gpu,
                 const std::function<std::optional<result_table>(const bench_report&)>& table);

}  // namespace blaster::cli
