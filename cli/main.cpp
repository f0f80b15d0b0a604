// blaster: is this kernel correct, and how fast is it, on this GPU, against the baseline and
// against the hardware's limit?
#include <algorithm>
#include <csignal>
#include <iostream>
#include <string_view>

#include <fmt/format.h>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "benchmarking/worker/gate_worker.hpp"
#include "cli/commands.hpp"
#include "cli/error_report.hpp"
#include "core/compile_sandbox.hpp"
#include "core/cuda_driver.hpp"
#include "core/error.hpp"
#include "core/revision.hpp"
#include "evidence/table_renderer.hpp"
#include "optimize/proposer_box.hpp"

int main(int argc, char** argv) {
  using namespace blaster::cli;
  // Under a file size limit (ulimit -f), a write then fails with EFBIG, which every writer reports
  // with its file and what to do, instead of SIGXFSZ ending blaster with no word. The worker and
  // compile children inherit it.
  std::signal(SIGXFSZ, SIG_IGN);
  // Internal: the child process in which the harness runs each candidate's kernels.
  if (argc == 3 && std::string_view(argv[1]) == "__worker") {
    if (std::string_view(argv[2]) == "--serve") return blaster::serve_gate_worker();
    return blaster::run_gate_worker(argv[2]);
  }
  // Internal: the keeper of an optimize session's proposer, in its box.
  if (argc >= 2 && std::string_view(argv[1]) == "__proposer_box") {
    return blaster::run_proposer_box(argc, argv);
  }
  // Internal: the child process in which NVRTC compiles one candidate, under the limits.
  if (argc == 3 && std::string_view(argv[1]) == "__compile") {
    return blaster::run_compile_child(argv[2]);
  }
  CLI::App app(
      "blaster: compile GPU kernels with NVRTC, reject every candidate that is not correct, time "
      "the survivors with CUDA events, and record everything as evidence.",
      "blaster");
  app.footer(
      "Quick start:\n"
      "  blaster doctor                  what this machine has\n"
      "  blaster compile --task rmsnorm  compile a task's kernels (no GPU needed)\n"
      "  blaster bench --task rmsnorm    check and time them on the GPU\n"
      "  blaster profile --task rmsnorm  their hardware counters, and why each is as fast as it "
      "is\n"
      "  blaster tune --task T --candidate F --cases ...  its best params at each served size\n"
      "  blaster runs / show RUN         what the store recorded\n"
      "  blaster export RUN --out DIR    an evidence bundle; blaster verify DIR checks one\n"
      "  blaster compare A B             two runs, variant by variant: FAST, SLOW, SAME\n"
      "  blaster portfolio --suite core10  a whole suite, as one evidence bundle\n"
      "  blaster merge SOURCE...         other homes (a portfolio's shards), or bundles, into "
      "this one\n\n"
      "A task is a folder tasks/<name>/ (task.json, init.cu, reference.cpp); candidates are .cu "
      "files in kernels/<name>/ that begin with a /* blaster {...} */ launch plan. See "
      "CONTRIBUTING.md.\n\n"
      "Exit status: 0 success; 1 the machine or harness failed; 2 bad input (the message names "
      "the file, line and fix); 3 a GPU is needed and there is none; 4 (verify) the evidence "
      "bundle does not verify; 5 (merge) a run or item clashed with this home's and was left out; "
      "(compare) 1 also when a variant got slower or was rejected. With "
      "--json, a failing command prints {\"error\": {\"code\", \"message\", \"file\", \"line\", "
      "\"hint\"}} on stdout.\n\n"
      "Environment: BLASTER_HOME (the store, default ./.blaster), BLASTER_ROOT (the folder holding "
      "tasks/ and kernels/), CUDA_HOME (the toolkit whose headers NVRTC uses).");
  app.require_subcommand(1);
  // Global flags may follow the subcommand too: `blaster bench --task t --json`.
  app.fallthrough();
  global_options global;
  app.add_option("--root", global.root, "folder holding tasks/ and kernels/");
  app.add_option("--home", global.home, "store folder (default $BLASTER_HOME or ./.blaster)");
  app.add_flag("--json", global.json,
               "print exact JSON on stdout instead of tables (--format json)");
  std::vector<std::string> formats;
  std::string format_help = "how results print:";
  for (const auto& f : blaster::output_formats()) {
    formats.emplace_back(f.name);
    format_help += fmt::format(" {} ({}),", f.name, f.help);
  }
  format_help.back() = ';';
  app.add_option("--format", global.format, format_help + " default table")
      ->check(CLI::IsMember(formats));
  app.add_flag("-q,--quiet", global.quiet, "print no progress on stderr");
  app.set_version_flag("--version", fmt::format("blaster 0.1.0 ({})", blaster::source_revision()));

  const command_fn commands[] = {
      add_bench_command(app, global),    add_compile_command(app, global),
      add_doctor_command(app, global),   add_runs_command(app, global),
      add_show_command(app, global),     add_history_command(app, global),
      add_export_command(app, global),   add_verify_command(app, global),
      add_keygen_command(app, global),   add_portfolio_command(app, global),
      add_compare_command(app, global),  add_profile_command(app, global),
      add_optimize_command(app, global), add_proposer_command(app, global),
      add_serve_command(app, global),    add_eval_command(app, global),
      add_memory_command(app, global),   add_trajectories_command(app, global),
      add_tune_command(app, global),     add_merge_command(app, global)};
  // An empty value (--shard '', --gpus '') is a mistake to name, never the flag left out.
  refuse_empty_values(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e) == 0 ? exit_ok : exit_bad_input;
    // The flags did not parse, so look for --json (or --format json) among the words.
    bool json = false;
    for (int i = 1; i < argc; ++i) {
      const std::string_view a = argv[i];
      json = json || a == "--json" || a == "--format=json" ||
             (a == "--format" && i + 1 < argc && std::string_view(argv[i + 1]) == "json");
    }
    if (code != exit_ok && json) {
      std::cout << error_json("bad_input", fmt::format("{}; see blaster --help", e.what())).dump(2)
                << '\n';
    }
    return code;
  }

  if (global.json) global.format = "json";
  global.json = global.format == "json";
  // Progress goes to stderr so that stdout stays one table or one JSON document.
  auto logger = spdlog::stderr_color_mt("blaster");
  logger->set_pattern("blaster: %v");
  logger->set_level(global.quiet ? spdlog::level::warn : spdlog::level::info);
  spdlog::set_default_logger(logger);

  // Every failure prints one line on stderr and, with --json, one object on stdout.
  auto fail = [&global](int code, std::string_view name, const std::string& message) {
    std::cerr << "blaster: " << message << '\n';
    if (global.json) std::cout << error_json(name, message).dump(2) << '\n';
    return code;
  };
  try {
    for (std::size_t i = 0; i < std::size(commands); ++i) {
      const CLI::App* command = app.get_subcommands({}).at(i);
      if (!command->parsed()) continue;
      require_format(global, formats_of(command->get_name()), command->get_name());
      return commands[i]();
    }
  } catch (const blaster::input_error& e) {
    return fail(exit_bad_input, "bad_input", e.what());
  } catch (const blaster::cuda::gpu_unavailable& e) {
    return fail(exit_no_gpu, "no_gpu", fmt::format("this command needs a GPU: {}", e.what()));
  } catch (const std::exception& e) {
    return fail(exit_failure, "failure", e.what());
  }
  return exit_failure;
}
