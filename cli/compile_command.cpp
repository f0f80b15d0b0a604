#include <algorithm>
#include <iostream>

#include <fmt/format.h>

#include "benchmarking/report/bench_report.hpp"
#include "benchmarking/report/result_printer.hpp"
#include "benchmarking/runner/bench_runner.hpp"
#include "cli/commands.hpp"
#include "cli/compile_flags.hpp"
#include "cli/error_report.hpp"
#include "evidence/store.hpp"
#include "evidence/table_renderer.hpp"

namespace blaster::cli {
namespace {

struct compile_flags {
  std::string task;
  std::vector<std::filesystem::path> candidates;
  std::string arch = "sm_90a";
  compile_limit_flags compile;
};

}  // namespace

command_fn add_compile_command(CLI::App& app, const global_options& global) {
  auto flags = std::make_shared<compile_flags>();
  CLI::App* cmd = app.add_subcommand(
      "compile",
      "Compile a task's kernels with NVRTC and show, per kernel, the registers, stack, spills "
      "and shared memory ptxas reports; needs no GPU.");
  cmd->footer(
      "Every params configuration of every launch plan is compiled, and every plan is resolved "
      "on every case of the task, so argument counts and sizes are checked against the compiled "
      "kernels' parameters. A kernel that does not compile shows NVRTC's log. Results are cached "
      "by the SHA-256 of source, shared headers, options, architecture and NVRTC version.\n\n"
      "NVRTC runs in a child process under a deadline and a memory cap, and a candidate may "
      "include only the CUDA toolkit's headers by name and kernels/common/ headers as "
      "\"common/NAME.cuh\"; anything else, and a source, plan or params space over its limit, "
      "is refused with the file, the limit and the flag that raises it.\n\n"
      "Exit status: 0 when everything compiled, 2 when a candidate did not.\n\n"
      "Examples:\n"
      "  blaster compile --task rmsnorm\n"
      "  blaster compile --task rmsnorm --candidate kernels/rmsnorm/rmsnorm_vec_regs.cu --arch "
      "sm_100a");
  cmd->add_option("--task", flags->task, "task name: a folder under tasks/")->required();
  cmd->add_option("--candidate", flags->candidates,
                  "compile only this file or folder (repeatable); default: the task's init.cu "
                  "and kernels/<task>/")
      ->check(CLI::ExistingPath);
  cmd->add_option("--arch", flags->arch, "target architecture")->capture_default_str();
  add_compile_limit_flags(*cmd, flags->compile);

  return [flags, &global]() {
    bench_options options;
    options.root = resolve_root(global);
    options.task = flags->task;
    options.candidates = flags->candidates;
    options.skip_baseline = !flags->candidates.empty();
    options.arch = flags->arch;
    options.compile = to_compile_limits(flags->compile);
    store records(resolve_home(global.home));
    const bench_report report = compile_task(options, records);
    const auto failed = std::count_if(report.results.begin(), report.results.end(),
                                      [](const auto& r) { return r.reason != reason_code::none; });
    if (global.json) {
      nlohmann::json j = to_json(report);
      if (failed > 0) {
        // The first refusal names its file, line and fix; the results hold every one.
        const auto first =
            std::find_if(report.results.begin(), report.results.end(),
                         [](const auto& r) { return r.reason != reason_code::none; });
        j["error"] = error_json("bad_input", first->message)["error"];
        j["error"]["variants_failed"] = failed;
      }
      std::cout << j.dump(2) << '\n';
    } else {
      make_renderer(global.format)->render(compile_table(report), std::cout);
    }
    return static_cast<int>(failed > 0 ? exit_bad_input : exit_ok);
  };
}

}  // namespace blaster::cli
