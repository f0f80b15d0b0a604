#include "cli/task_flags.hpp"

#include <fmt/format.h>

namespace blaster::cli {

void add_task_flags(CLI::App& command, task_flags& flags, const std::string& case_help) {
  command.add_option("--task", flags.task, "task name: a folder under tasks/")->required();
  command
      .add_option("--candidate", flags.candidates,
                  "a candidate .cu file or a folder of them (repeatable); default: kernels/<task>/")
      ->check(CLI::ExistingPath);
  command.add_option("--arch", flags.arch,
                     "compile for this target, e.g. sm_90a (default: the GPU's)");
  command.add_option("--seed", flags.seed, "input seed (default: drawn at run time)");
  command.add_option("--case", flags.case_name, case_help);
}

void apply(const task_flags& flags, bench_options& options) {
  options.task = flags.task;
  options.candidates = flags.candidates;
  options.arch = flags.arch;
  options.seed = flags.seed;
  options.timed_case = flags.case_name;
}

std::string task_arguments(const std::string& command, const task_flags& flags) {
  std::string line = fmt::format("blaster {} --task {}", command, flags.task);
  for (const auto& c : flags.candidates) line += " --candidate " + c.string();
  if (!flags.arch.empty()) line += " --arch " + flags.arch;
  if (flags.seed) line += fmt::format(" --seed {}", *flags.seed);
  if (!flags.case_name.empty()) line += " --case " + flags.case_name;
  return line;
}

}  // namespace blaster::cli
