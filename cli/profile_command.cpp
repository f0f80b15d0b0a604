#include <fmt/format.h>

#include "benchmarking/profile/profile_table.hpp"
#include "benchmarking/report/bench_report.hpp"
#include "benchmarking/runner/bench_runner.hpp"
#include "cli/commands.hpp"
#include "cli/compile_flags.hpp"
#include "cli/error_report.hpp"
#include "cli/task_flags.hpp"

namespace blaster::cli {
namespace {

struct profile_flags {
  task_flags run;
  bool ncu = false;
  compile_limit_flags compile;
};

std::string command_line(const profile_flags& f) {
  std::string line = task_arguments("profile", f.run);
  if (f.ncu) line += " --ncu";
  line += compile_limit_arguments(f.compile);
  return line;
}

}  // namespace

command_fn add_profile_command(CLI::App& app, const global_options& global) {
  auto flags = std::make_shared<profile_flags>();
  CLI::App* cmd = app.add_subcommand(
      "profile",
      "Check a task's baseline and candidates as bench does, then collect the hardware "
      "counters of every variant that passed, and say why each takes the time it takes.");
  cmd->footer(
      "The counters come from CUPTI's range profiler in a worker of their own, one kernel of "
      "the plan at a time, on the timed case: DRAM bytes read and written (with the dirty "
      "lines the L2 writes back after the kernel), DRAM and L2 throughput, L2 and L1 hit rates, "
      "achieved and theoretical occupancy with its limiter, SM and tensor-pipe utilisation, "
      "instructions, and the warp stall reasons. The plan is replayed once per pass; before "
      "each, the inputs are uploaded again, the outputs poisoned again and the L2 emptied, and "
      "before each kernel the SMs' instruction caches. The whole count runs five times and each "
      "counter is the median (stall counts vary from one count to the next). The "
      "diagnosis says bandwidth-, compute-, latency- or launch-bound, the DRAM bytes over the "
      "task's minimal bytes (a kernel that reads its input twice shows about 2x) and the top two "
      "stalls. Nothing is timed; counters never make a verdict.\n\n"
      "--ncu also runs Nsight Compute (`ncu`) on the same worker, five runs of the plan, "
      "stores its .ncu-rep in the CAS and prints its value of every counter beside CUPTI's. "
      "ncu reruns the worker once per pass and leaves the caches to the worker's own sweeps, "
      "so both tools count each kernel on the same L2. Where counters are not "
      "permitted (ERR_NVGPUCTRPERM) or ncu is missing, the output says so and the run goes "
      "on. Without a GPU the command exits with 3.\n\n"
      "Examples:\n"
      "  blaster profile --task rmsnorm\n"
      "  blaster profile --task layernorm --candidate kernels/layernorm/layernorm_resident.cu "
      "--ncu");
  add_task_flags(*cmd, flags->run,
                 "count this case (default: the task's canonical case); every case is checked");
  cmd->add_option("--deadline", flags->run.deadline_s,
                  "seconds the gate of each variant may take (default: twice what the "
                  "baseline needed, plus 5 s); the counters get 20 times that")
      ->check(finite_range(0.1, 86400.0));
  cmd->add_flag("--ncu", flags->ncu,
                "also Nsight Compute's report of each variant's kernels, stored in the CAS, its "
                "counters beside CUPTI's");
  add_compile_limit_flags(*cmd, flags->compile);

  return [flags, &global]() {
    bench_options options;
    options.root = resolve_root(global);
    apply(flags->run, options);
    options.timing.mode = timing_mode::hot;
    options.profile_only = true;
    options.ncu = flags->ncu;
    options.compile = to_compile_limits(flags->compile);
    options.command = command_line(*flags);
    return run_and_print(global, options, "counters need a GPU",
                         [](const bench_report& report) -> std::optional<result_table> {
                           if (!report.gpu) return std::nullopt;
                           return profile_table(report);
                         });
  };
}

}  // namespace blaster::cli
