#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/compile_flags.hpp"
#include "cli/error_report.hpp"
#include "cli/task_flags.hpp"
#include "core/error.hpp"
#include "evidence/store.hpp"
#include "optimize/tune.hpp"

namespace blaster::cli {
namespace {

struct tune_flags {
  task_flags run;
  std::string cases;
  std::string size = "T";
  int sessions = 5;
  int confirm_best = 2;
  std::filesystem::path out;  // empty: kernels/<task>/tuned/
  compile_limit_flags compile;
};

std::string entry_line(const tuned_case& c) {
  if (!c.entry) return fmt::format("{:<10} {:>6}  -  {}", c.case_name, c.size, c.why);
  const tuned_entry& e = *c.entry;
  std::string line =
      fmt::format("{:<10} {:>6}  {}  {:.2f} us", c.case_name, c.size, c.label, *e.time_us);
  if (e.interval_us)
    line += fmt::format(" [{:.2f}, {:.2f}]", e.interval_us->first, e.interval_us->second);
  if (e.default_time_us) {
    line += fmt::format("  default {} {:.2f} us ({:.2f}x)", c.default_label, *e.default_time_us,
                        *e.default_time_us / *e.time_us);
  }
  return line + fmt::format("  run {}", c.run_id);
}

}  // namespace

command_fn add_tune_command(CLI::App& app, const global_options& global) {
  auto flags = std::make_shared<tune_flags>();
  CLI::App* cmd = app.add_subcommand(
      "tune",
      "Find the best params of one candidate at each served size and write them as a tuned "
      "table in the format inference engines ship.");
  cmd->footer(
      "For each case of --cases, every params combination of the candidate is compiled and "
      "gated on every case of the task, timed in a first session, and the --confirm-best "
      "fastest are confirmed over --sessions sessions against the baseline, as `bench "
      "--confirm-best N` does. The fastest confirmed configuration becomes the entry of that "
      "case's size (the --size symbol, tokens by default), with its time, the time's 95% "
      "interval and the time of the candidate's first configuration in the same run. Cases that "
      "differ in other symbols go to different tables: one file per shape, named by its "
      "symbols, the device, the dtype and the toolchain (NVRTC and driver versions), under "
      "kernels/<task>/tuned/ unless --out names another folder.\n\n"
      "Without a GPU the candidate is compiled and the command exits with 3.\n\n"
      "Examples:\n"
      "  blaster tune --task rms_norm --candidate kernels/rms_norm/rms_norm_regs.cu "
      "--cases t1,t16,t128,t1024,t8192");
  add_task_flags(*cmd, flags->run, "");
  cmd->remove_option(cmd->get_option("--case"));  // each case of --cases is timed in turn
  cmd->add_option("--cases", flags->cases,
                  "the cases to tune at (\"all\", or names separated by commas): one entry each")
      ->required();
  cmd->add_option("--size", flags->size,
                  "the symbol the table's entries are keyed by (tokens: T; rows: M)")
      ->capture_default_str();
  cmd->add_option("--sessions", flags->sessions,
                  "sessions that confirm the fastest configurations at each size")
      ->check(CLI::Range(2, 100))
      ->capture_default_str();
  cmd->add_option("--confirm-best", flags->confirm_best,
                  "configurations confirmed at each size after the first session")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--out", flags->out, "folder of the tables (default: kernels/<task>/tuned/)");
  cmd->add_option("--deadline", flags->run.deadline_s,
                  "seconds each evaluation may take (default: twice what the baseline needed, "
                  "plus 5 s)")
      ->check(finite_range(0.1, 86400.0));
  add_compile_limit_flags(*cmd, flags->compile);

  return [flags, &global]() {
    if (flags->run.candidates.size() != 1 ||
        !std::filesystem::is_regular_file(flags->run.candidates[0])) {
      BLASTER_INPUT_ERROR("tune takes one --candidate file, whose params it tunes");
    }
    tune_options options;
    options.bench.root = resolve_root(global);
    apply(flags->run, options.bench);
    options.bench.sessions = flags->sessions;
    options.bench.confirm_best = flags->confirm_best;
    options.bench.compile = to_compile_limits(flags->compile);
    options.bench.command = task_arguments("tune", flags->run) + " --cases " + flags->cases +
                            " --size " + flags->size + compile_limit_arguments(flags->compile);
    options.cases = cases_named(options.bench, flags->cases);
    options.size_symbol = flags->size;
    store records(resolve_home(global.home));
    const tune_result result = run_tune(options, records);
    if (!result.gpu) {
      const std::string no_gpu = fmt::format("tuning needs a GPU: {}", result.gpu_unavailable);
      if (global.json) std::cout << error_json("no_gpu", no_gpu).dump(2) << '\n';
      std::cerr << "blaster: " << no_gpu << '\n';
      return static_cast<int>(exit_no_gpu);
    }
    const std::filesystem::path folder =
        flags->out.empty() ? options.bench.root / "kernels" / options.bench.task / "tuned"
                           : flags->out;
    nlohmann::json written = nlohmann::json::array();
    for (const auto& table : result.tables) {
      written.push_back(write_tuned_table(folder, table).string());
    }
    if (global.json) {
      nlohmann::json cases = nlohmann::json::array();
      for (const auto& c : result.cases) {
        cases.push_back({{"case", c.case_name},
                         {"size", c.size},
                         {"variant", c.label},
                         {"default", c.default_label},
                         {"time_us", c.entry ? nlohmann::json(*c.entry->time_us) : nullptr},
                         {"default_time_us", c.entry && c.entry->default_time_us
                                                 ? nlohmann::json(*c.entry->default_time_us)
                                                 : nullptr},
                         {"why", c.why},
                         {"run_id", c.run_id}});
      }
      std::cout << nlohmann::json{{"cases", cases}, {"tables", written}}.dump(2) << '\n';
      return static_cast<int>(exit_ok);
    }
    std::cout << fmt::format(
        "{:<10} {:>6}  best configuration, its time [95% interval], the "
        "default's\n",
        "case", flags->size);
    for (const auto& c : result.cases) std::cout << entry_line(c) << '\n';
    for (const auto& path : written) std::cout << "wrote " << path.get<std::string>() << '\n';
    return static_cast<int>(exit_ok);
  };
}

}  // namespace blaster::cli
