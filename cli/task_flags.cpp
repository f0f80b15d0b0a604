#include "cli/task_flags.hpp"

#include <algorithm>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "cli/error_report.hpp"
#include "core/error.hpp"
#include "evidence/store.hpp"
#include "evidence/table_renderer.hpp"
#include "tasks/task_spec.hpp"

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

void add_gpus_flag(CLI::App& command, std::string& gpus, const std::string& help) {
  command.add_option("--gpus", gpus,
                     "'all', or GPU numbers as CUDA numbers them here (0,1): one supervised "
                     "worker on each, GPUs of one model; " +
                         help);
}

void apply(const task_flags& flags, bench_options& options) {
  if (!flags.gpus.empty()) options.gpus = parse_gpu_choice(flags.gpus);
  options.task = flags.task;
  options.candidates = flags.candidates;
  options.arch = flags.arch;
  options.seed = flags.seed;
  options.timed_case = flags.case_name;
  if (flags.deadline_s) {
    options.deadline = std::chrono::milliseconds(static_cast<long long>(*flags.deadline_s * 1000));
  }
}

int run_and_print(const global_options& global, const bench_options& options,
                  const std::string& needs_gpu,
                  const std::function<std::optional<result_table>(const bench_report&)>& table) {
  store records(resolve_home(global.home));
  return print_report(global, run_bench(options, records), needs_gpu, table);
}

int print_report(const global_options& global, const bench_report& report,
                 const std::string& needs_gpu,
                 const std::function<std::optional<result_table>(const bench_report&)>& table) {
  const std::string no_gpu = fmt::format("{}: {}", needs_gpu, report.gpu_unavailable);
  if (global.json) {
    nlohmann::json j = to_json(report);
    if (!report.gpu) j["error"] = error_json("no_gpu", no_gpu)["error"];
    std::cout << j.dump(2) << '\n';
  } else if (const auto t = table(report)) {
    make_renderer(global.format)->render(*t, std::cout);
  }
  if (!report.gpu) {
    std::cerr << "blaster: " << no_gpu << '\n';
    return static_cast<int>(exit_no_gpu);
  }
  return static_cast<int>(exit_ok);
}

std::vector<timed_case> cases_named(const bench_options& options, const std::string& list) {
  const task_spec task = load_task(options.root / "tasks" / options.task);
  std::vector<timed_case> cases;
  if (list == "all") {
    for (const auto& c : task.cases) cases.push_back({.name = c.name, .weight = c.weight});
    return cases;
  }
  std::stringstream names(list);
  for (std::string name; std::getline(names, name, ',');) {
    if (name.empty()) continue;
    const task_case& c = task.find_case(name);  // an unknown name lists the task's cases
    if (std::any_of(cases.begin(), cases.end(),
                    [&](const timed_case& t) { return t.name == name; })) {
      BLASTER_INPUT_ERROR("--cases names {} twice", name);
    }
    cases.push_back({.name = c.name, .weight = c.weight});
  }
  if (cases.empty()) BLASTER_INPUT_ERROR("--cases names no case; give \"all\" or case names");
  return cases;
}

std::string task_arguments(const std::string& command, const task_flags& flags) {
  std::string line = fmt::format("blaster {} --task {}", command, flags.task);
  for (const auto& c : flags.candidates) line += " --candidate " + c.string();
  if (!flags.arch.empty()) line += " --arch " + flags.arch;
  if (flags.seed) line += fmt::format(" --seed {}", *flags.seed);
  if (!flags.case_name.empty()) line += " --case " + flags.case_name;
  if (!flags.gpus.empty()) line += " --gpus " + flags.gpus;
  return line;
}

}  // namespace blaster::cli
