#include <iostream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "benchmarking/report/bench_report.hpp"
#include "benchmarking/report/case_summary.hpp"
#include "benchmarking/report/result_printer.hpp"
#include "benchmarking/runner/bench_runner.hpp"
#include "benchmarking/runner/warm_bench.hpp"
#include "cli/commands.hpp"
#include "cli/compile_flags.hpp"
#include "cli/error_report.hpp"
#include "cli/task_flags.hpp"
#include "evidence/store.hpp"
#include "evidence/table_renderer.hpp"

namespace blaster::cli {
namespace {

struct bench_flags {
  task_flags run;
  std::string mode;  // empty: the task's, else hot
  bool rotate = false;
  double sample_ms = 1.0;
  int min_samples = 10;
  int max_samples = 1000;
  double max_noise_pct = 0.5;
  double budget_s = 2.0;
  int sessions = 1;
  bool confirm = false;
  double cooldown_s = 1.0;
  int confirm_best = 0;
  bool sanitize = false;
  bool profile = false;
  bool ncu = false;
  std::string cases;  // --cases: "all" or names separated by commas
  bool all_params = false;
  compile_limit_flags compile;
};

constexpr const char* needs_gpu = "correctness and timing need a GPU";

// One bench run per case, each printed as bench prints it, then every variant over the cases.
// The runs are one series: each variant is gated once, on data that holds every listed case.
int run_cases(const global_options& global, bench_options options, const std::string& list,
              bool console) {
  const std::vector<timed_case> cases = cases_named(options, list);
  store records(resolve_home(global.home));
  warm_bench series(/*keep_worker=*/false);
  for (const auto& c : cases) series.cases.push_back(c.name);
  std::vector<bench_report> reports;
  nlohmann::json runs = nlohmann::json::array();
  const std::string command = options.command;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    options.timed_case = cases[k].name;
    options.command = fmt::format("{} (case {} of {})", command, k + 1, cases.size());
    spdlog::info("case {} ({} of {})", cases[k].name, k + 1, cases.size());
    reports.push_back(run_bench(options, records, &series));
    const bench_report& report = reports.back();
    if (!report.gpu) {
      return print_report(global, report, needs_gpu,
                          [](const bench_report& r) { return compile_table(r); });
    }
    if (global.json) {
      runs.push_back(to_json(report));
    } else {
      std::cout << fmt::format(
          "== case {}{}\n", cases[k].name,
          cases[k].weight == 1.0 ? "" : fmt::format(" (weight {:g})", cases[k].weight));
      make_renderer(global.format)->render(bench_table(report, console), std::cout);
      std::cout << '\n';
    }
  }
  const auto summary = summarize_cases(cases, reports);
  if (global.json) {
    std::cout << nlohmann::json{{"runs", runs}, {"summary", to_json(cases, summary)}}.dump(2)
              << '\n';
  } else {
    for (const auto& line : case_summary_lines(cases, summary)) std::cout << line << '\n';
  }
  return static_cast<int>(exit_ok);
}

std::string command_line(const bench_flags& f) {
  std::string line = task_arguments("bench", f.run);
  if (!f.mode.empty()) line += " --mode " + f.mode;
  if (f.rotate) line += " --rotate";
  if (f.confirm) line += " --confirm";
  if (f.sessions != 1) line += fmt::format(" --sessions {}", f.sessions);
  if (f.confirm_best != 0) line += fmt::format(" --confirm-best {}", f.confirm_best);
  if (f.sanitize) line += " --sanitize";
  if (f.profile) line += " --profile";
  if (f.ncu) line += " --ncu";
  if (!f.cases.empty()) line += " --cases " + f.cases;
  if (f.all_params) line += " --all-params";
  line += compile_limit_arguments(f.compile);
  return line;
}

}  // namespace

command_fn add_bench_command(CLI::App& app, const global_options& global) {
  auto flags = std::make_shared<bench_flags>();
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "Compile a task's baseline and candidates with NVRTC, reject every candidate whose output "
      "is wrong, time the rest and print one verdict per candidate.");
  cmd->footer(
      "Each candidate is checked on every case of the task against a float64 reference (outputs "
      "poisoned first, so unwritten elements are caught), then timed on the canonical case: "
      "warm-up, inner loop calibrated to about 1 ms, median of the samples, CUDA events (hot "
      "mode). Speedup is the baseline's time (the task's init.cu) over the candidate's, measured "
      "in the same run; '% roof' is the roofline floor over the time: the task's bytes read and "
      "written at the ceiling of that mix (DRAM, or L2 where the data stays there) that blaster "
      "measures on the device at the start of the run. A time below the floor by more than the "
      "ceiling's uncertainty is rejected as impossible_speed.\n\n"
      "A candidate whose tuned table (kernels/<task>/tuned/, from `blaster tune`) fits the "
      "device, the dtype and the timed case's shape runs only the table's entry nearest the "
      "case's size, as an inference engine would pick it; the output names the entry. "
      "--all-params runs every configuration.\n\n"
      "Without a GPU every kernel is still compiled; the command then says that correctness and "
      "timing need a GPU and exits with 3.\n\n"
      "Examples:\n"
      "  blaster bench --task rmsnorm\n"
      "  blaster bench --task rmsnorm --candidate my_kernel.cu --json");
  add_task_flags(*cmd, flags->run,
                 "time this case of the task (default: its canonical case), or a case an earlier "
                 "run drew, as its evidence names it (drawn:SEED:k); every case, and the shapes "
                 "this run draws from the task's ranges, is checked either way");
  std::string mode_help;
  std::vector<std::string> mode_names;
  for (const auto& mode : timing_modes()) {
    mode_help += fmt::format("{}: {}; ", mode.name, mode.help);
    mode_names.emplace_back(mode.name);
  }
  cmd->add_option(
         "--mode", flags->mode,
         mode_help + "(default: the timed case's mode in task.json, else the task's, else hot)")
      ->check(CLI::IsMember(mode_names));
  cmd->add_flag("--rotate", flags->rotate,
                "hot and graph: rotate the launches over enough copies of the buffers that one "
                "sample's data exceeds the L2, so that no launch reads what the last one left "
                "in the cache");
  cmd->add_option("--sample-ms", flags->sample_ms,
                  "hot and graph: target length of one sample [ms]")
      ->check(finite_range(0.01, 1000.0))
      ->capture_default_str();
  cmd->add_option("--max-noise", flags->max_noise_pct,
                  "stop sampling once the relative noise is at most this [%]")
      ->check(finite_range(0.0, 100.0))
      ->capture_default_str();
  cmd->add_option("--min-samples", flags->min_samples, "samples taken before stopping may stop")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--samples", flags->max_samples, "samples at most per candidate")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--budget", flags->budget_s, "seconds of sampling at most per candidate")
      ->check(finite_range(0.001, 3600.0))
      ->capture_default_str();
  cmd->add_option("--sessions", flags->sessions,
                  "timing sessions: each a fresh process per variant, the order alternating "
                  "(baseline first, then last); the reported time is the median of the session "
                  "medians")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_flag("--confirm", flags->confirm,
                "the confirmation protocol: 5 sessions, so that each candidate gets a verdict "
                "(improved, no_improvement, inconclusive) with a 95% interval of its speedup");
  cmd->add_option("--confirm-best", flags->confirm_best,
                  "after the first session, time only the baseline and this many of the fastest "
                  "candidates in the remaining sessions; the others are reported as screened out "
                  "(default 0: every candidate in every session)")
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--cooldown", flags->cooldown_s, "seconds between two timing sessions")
      ->check(finite_range(0.0, 600.0))
      ->capture_default_str();
  cmd->add_option("--deadline", flags->run.deadline_s,
                  "seconds each evaluation (gate or timing) may take before its process is "
                  "killed (default: twice what the baseline needed, plus 5 s)")
      ->check(finite_range(0.1, 86400.0));
  cmd->add_flag("--sanitize", flags->sanitize,
                "also run the gate's small cases under compute-sanitizer (memcheck, racecheck, "
                "initcheck, synccheck) where it is installed; a reported error rejects the "
                "candidate as sanitizer_error");
  cmd->add_flag("--profile", flags->profile,
                "after the timing, collect every passing variant's hardware counters (CUPTI's "
                "range profiler, in a worker of its own) and print the diagnosis under its row: "
                "bandwidth-, compute-, latency- or launch-bound, DRAM bytes over the task's "
                "minimum, the top stalls; diagnostics only, never a verdict");
  cmd->add_flag("--ncu", flags->ncu,
                "with --profile: also Nsight Compute's report of each variant's kernels, stored "
                "in the CAS, with its counters beside CUPTI's (where ncu is installed)");
  cmd->add_option("--cases", flags->cases,
                  "time each of these cases (\"all\", or names separated by commas) in a run of "
                  "its own, and print each variant's speedup per case with their geometric mean, "
                  "weighted by each case's \"weight\" in task.json (how often that size is served)")
      ->excludes(cmd->get_option("--case"));
  cmd->add_flag("--all-params", flags->all_params,
                "time every params configuration of each candidate, also where a tuned table "
                "(kernels/<task>/tuned/, written by `blaster tune`) names the one for this "
                "device and the timed case's size");
  add_gpus_flag(*cmd, flags->run.gpus,
                "every variant's gate is run on one of them, each GPU taking the next; with "
                "--confirm-best a first session screens the candidates on all of them, each "
                "ranked by its time over the baseline's on the same GPU; every session that a "
                "verdict compares runs on the first GPU named");
  add_compile_limit_flags(*cmd, flags->compile);

  return [flags, &global]() {
    bench_options options;
    options.root = resolve_root(global);
    apply(flags->run, options);
    options.timing.mode = *parse_timing_mode(flags->mode.empty() ? "hot" : flags->mode);
    options.mode_given = !flags->mode.empty();
    options.timing.rotate_buffers = flags->rotate;
    options.timing.target_sample_ms = flags->sample_ms;
    options.timing.max_samples = flags->max_samples;
    options.timing.min_samples = std::min(flags->min_samples, flags->max_samples);
    options.timing.max_noise = flags->max_noise_pct / 100.0;
    options.timing.budget_ms = flags->budget_s * 1000.0;
    options.sessions = flags->confirm ? std::max(5, flags->sessions) : flags->sessions;
    options.cooldown_s = flags->cooldown_s;
    options.confirm_best = flags->confirm_best;
    options.sanitize = flags->sanitize;
    options.profile = flags->profile || flags->ncu;
    options.ncu = flags->ncu;
    options.compile = to_compile_limits(flags->compile);
    options.use_tuned = !flags->all_params;
    options.command = command_line(*flags);
    // The console table keeps its columns; the other formats carry every metric.
    const bool console = global.format == "table";
    if (!flags->cases.empty()) return run_cases(global, options, flags->cases, console);
    return run_and_print(global, options, needs_gpu, [console](const bench_report& report) {
      return report.gpu ? bench_table(report, console) : compile_table(report);
    });
  };
}

}  // namespace blaster::cli
