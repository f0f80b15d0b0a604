#include <algorithm>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "benchmarking/report/result_printer.hpp"
#include "benchmarking/tuned/tuned_lookup.hpp"
#include "cli/commands.hpp"
#include "cli/compile_flags.hpp"
#include "cli/error_report.hpp"
#include "cli/store_access.hpp"
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
  double screen_budget_s = 0.5;  // [seconds]
  std::filesystem::path out;     // empty: kernels/<task>/tuned/<candidate>/
  std::filesystem::path check;   // --check: a table to measure again
  bool from_runs = false;        // --from-runs: the store's runs, measured already
  compile_limit_flags compile;
};

// Without a GPU: what the run compiled, as bench prints it (a compile error with its NVRTC log),
// then why tune cannot measure here on stderr (and as --json's error); the exit status.
int no_gpu(const global_options& global, const bench_report& compiled) {
  return print_report(global, compiled, "tuning needs a GPU",
                      [](const bench_report& r) { return compile_table(r); });
}

// The run's rejections under a case's line, but those of `shown` (said above already).
std::string rejected_lines(const tuned_case& c, const std::vector<rival_time>& shown = {}) {
  std::string lines;
  for (const auto& r : c.rejected) {
    if (std::any_of(shown.begin(), shown.end(),
                    [&](const rival_time& t) { return t.label == r.label; })) {
      continue;
    }
    lines += fmt::format("\n{:<17}  rejected: {}{}, {}", "", r.baseline ? "the baseline " : "",
                         r.label, r.why);
  }
  return lines;
}

nlohmann::json rejected_json(const tuned_case& c) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : c.rejected) {
    out.push_back({{"variant", r.label}, {"baseline", r.baseline}, {"why", r.why}});
  }
  return out;
}

std::string entry_line(const tuned_case& c) {
  if (!c.entry) {
    return fmt::format("{:<10} {:>6}  -  {}", c.case_name, c.size, c.why) + rejected_lines(c);
  }
  const tuned_entry& e = *c.entry;
  std::string line =
      fmt::format("{:<10} {:>6}  {}  {:.2f} us", c.case_name, c.size, c.label, *e.time_us);
  if (e.interval_us)
    line += fmt::format(" [{:.2f}, {:.2f}]", e.interval_us->first, e.interval_us->second);
  if (e.default_time_us) {
    line += fmt::format("  default {} {:.2f} us ({:.2f}x)", c.default_label, *e.default_time_us,
                        *e.default_time_us / *e.time_us);
  }
  line += fmt::format("  run {}", c.run_id);
  if (!c.device.empty()) line += " on " + c.device;
  for (std::size_t k = 1; k < c.confirmed.size(); ++k) {  // [0] is the entry
    line += fmt::format("\n{:<17}  also confirmed: {} {:.2f} us ({:.2f}x the entry's time)", "",
                        c.confirmed[k].first, c.confirmed[k].second,
                        c.confirmed[k].second / *e.time_us);
  }
  return line + rejected_lines(c);
}

// Each of the table's other configurations at this entry's size, against the entry's time.
std::string rival_lines(const checked_entry& e) {
  std::string lines;
  for (const rival_time& r : e.rivals) {
    lines +=
        fmt::format("\n{:<18}  the entry of {} here: {} ", "", fmt::join(r.sizes, ", "), r.label);
    if (!r.time_us) {
      lines += "not confirmed: " + r.why;
    } else if (e.table_time_us) {
      lines += fmt::format("{:.2f} us ({:.2f}x the entry's time)", *r.time_us,
                           *r.time_us / *e.table_time_us);
    } else {
      lines += fmt::format("{:.2f} us", *r.time_us);
    }
  }
  return lines;
}

std::string checked_line(const checked_entry& e) {
  const std::string where = fmt::format("{:>6}  {:<10}", e.size, e.case_name);
  if (!e.why.empty() && !e.now.entry) return fmt::format("{}  not measured: {}", where, e.why);
  if (!e.now.entry) {
    return fmt::format("{}  no configuration passed: {}", where, e.now.why) + rejected_lines(e.now);
  }
  const tuned_entry& now = *e.now.entry;
  std::string line;
  if (e.within_noise) {
    line = fmt::format("{}  still the best within noise: {} {:.2f} us, {} {:.2f} us", where,
                       e.table_label, *e.table_time_us, e.now.label, *now.time_us);
  } else if (e.still_best) {
    line = fmt::format("{}  still the best: {} {:.2f} us", where, e.now.label, *now.time_us);
  } else {
    line =
        fmt::format("{}  NO LONGER THE BEST: now {} {:.2f} us", where, e.now.label, *now.time_us);
  }
  if (e.best_over_table) {
    line += fmt::format(" ({:.3f}x the table's, 95% interval [{:.3f}, {:.3f}])",
                        e.best_over_table->point, e.best_over_table->low, e.best_over_table->high);
  }
  if (!e.still_best && e.table_label.empty()) return line + "; " + e.why + rejected_lines(e.now);
  if (!e.still_best) {
    line += fmt::format("; the table's {} ", e.table_label);
    line += e.table_time_us ? fmt::format("{:.2f} us", *e.table_time_us) : std::string("rejected");
    if (e.table_screened) line += " (screened out after the first session)";
  }
  return line + rival_lines(e) + rejected_lines(e.now, e.rivals);
}

nlohmann::json rivals_json(const checked_entry& e) {
  nlohmann::json out = nlohmann::json::array();
  for (const rival_time& r : e.rivals) {
    out.push_back({{"sizes", r.sizes},
                   {"configuration", r.label},
                   {"us", r.time_us ? nlohmann::json(*r.time_us) : nullptr},
                   {"why", r.why}});
  }
  return out;
}

// `tune --check`: prints each entry's state; exit 1 where one is no longer the best.
int run_check(const global_options& global, const tune_options& options,
              const std::filesystem::path& file) {
  const tuned_table table = read_tuned_table(file);
  require_table_of(options, table, file);
  store records(resolve_home(global.home));
  const check_result result = check_tuned_table(options, table, records);
  if (!result.gpu) return no_gpu(global, result.compiled);
  bool stale = false;
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& e : result.entries) {
    stale |= !e.still_best;
    entries.push_back(
        {{"size", e.size},
         {"case", e.case_name},
         {"still_best", e.still_best},
         {"best_now", e.now.label},
         {"best_now_us", e.now.entry ? nlohmann::json(*e.now.entry->time_us) : nullptr},
         {"table_configuration", e.table_label},
         {"table_configuration_us", e.table_time_us ? nlohmann::json(*e.table_time_us) : nullptr},
         {"table_configuration_screened", e.table_screened},
         {"within_noise", e.within_noise},
         {"best_over_table", e.best_over_table ? nlohmann::json{{"point", e.best_over_table->point},
                                                                {"low", e.best_over_table->low},
                                                                {"high", e.best_over_table->high}}
                                               : nlohmann::json(nullptr)},
         {"other_entries", rivals_json(e)},
         {"rejected", rejected_json(e.now)},
         {"why", e.why},
         {"run_id", e.now.run_id}});
  }
  if (global.json) {
    std::cout << nlohmann::json{{"table", file.string()},
                                {"entries", entries},
                                {"mismatches", result.mismatches}}
                     .dump(2)
              << '\n';
  } else {
    std::cout << "checking " << file.string() << '\n';
    for (const auto& m : result.mismatches) {
      std::cout << "not tuned here: " << m << '\n';
    }
    for (const auto& e : result.entries) std::cout << checked_line(e) << '\n';
  }
  return stale ? 1 : static_cast<int>(exit_ok);
}

}  // namespace

command_fn add_tune_command(CLI::App& app, const global_options& global) {
  auto flags = std::make_shared<tune_flags>();
  CLI::App* cmd = app.add_subcommand(
      "tune",
      "Find the best params of one candidate at each served size and write them as a tuned "
      "table in the format inference engines ship.");
  cmd->footer(
      "Every params combination of the candidate is compiled and gated once, on every case of "
      "the task with the same data for all of --cases. Then, for each case of --cases, each "
      "combination that passed is timed in a first session, for --screen-budget seconds each, and "
      "the --confirm-best fastest are confirmed over --sessions sessions against the baseline, "
      "as `bench --confirm-best N` does. The fastest confirmed configuration becomes the entry "
      "of that case's size (the --size symbol, tokens by default), with its time, the time's 95% "
      "interval and the time of the candidate's first configuration in the same run. Cases that "
      "differ in other symbols go to different tables: one file per shape, named by its "
      "symbols, the device, the dtype and the toolchain (NVRTC and driver versions), under "
      "kernels/<task>/tuned/<candidate>/ (the candidate's file name without .cu) unless --out "
      "names another folder. A table already there keeps its entries at the sizes not tuned "
      "now.\n\n"
      "--check TABLE measures each entry again at its size the same way, with every "
      "configuration the table holds confirmed beside the fastest, so that each entry is timed "
      "against the others' configurations in the same sessions. An entry is no longer the best "
      "where another configuration's speedup over it, sessions paired, has a 95% interval above "
      "1; a faster one within that noise is reported as such.\n\n"
      "--from-runs measures nothing: each case's entry comes from the newest completed run in the "
      "home (--home) that timed that case as tune does, every configuration of the candidate as "
      "its files are now, none chosen by a table, over two sessions or more: a portfolio's case "
      "of a task with no table is one. Each device and toolchain that such runs are of gets its "
      "own table; a case with no such run says which run came nearest and why it does not "
      "count.\n\n"
      "Without a GPU the candidate is compiled and the command exits with 3; --from-runs needs "
      "no GPU.\n\n"
      "Examples:\n"
      "  blaster tune --task rms_norm --candidate kernels/rms_norm/rms_norm_regs.cu "
      "--cases t1,t16,t128,t1024,t8192\n"
      "  blaster --home merged tune --task moe_route --candidate "
      "kernels/moe_route/moe_route_ballot.cu --cases all --from-runs");
  add_task_flags(*cmd, flags->run, "");
  cmd->remove_option(cmd->get_option("--case"));  // each case of --cases is timed in turn
  cmd->add_option("--cases", flags->cases,
                  "the cases to tune at (\"all\", or names separated by commas): one entry each");
  cmd->add_option("--check", flags->check,
                  "measure a tuned table's entries again, each at its size as tune measures it "
                  "and with every other entry's configuration confirmed beside it, and say which "
                  "are no longer the best: another configuration faster beyond the run's noise "
                  "(exit 1 where one is not)")
      ->check(CLI::ExistingFile)
      ->excludes(cmd->get_option("--cases"));
  cmd->add_flag("--from-runs", flags->from_runs,
                "take each case's entry from the runs in the store that timed it as tune does, "
                "measuring nothing")
      ->excludes(cmd->get_option("--check"));
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
  cmd->add_option("--screen-budget", flags->screen_budget_s,
                  "seconds of sampling per configuration in the first session, which screens: "
                  "it needs their order, and the sessions that confirm the fastest sample for "
                  "the full budget")
      ->check(finite_range(0.01, 3600.0))
      ->capture_default_str();
  add_gpus_flag(*cmd, flags->run.gpus,
                "each configuration is gated on one of them and screened on all of them at "
                "once; the confirming sessions of each case run on the first GPU named");
  cmd->add_option("--out", flags->out,
                  "folder of the tables (default: kernels/<task>/tuned/<candidate>/)");
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
    options.bench.screen_budget_ms = flags->screen_budget_s * 1000.0;
    options.bench.use_tuned = false;  // every configuration competes, whatever a table says
    options.bench.compile = to_compile_limits(flags->compile);
    options.bench.command =
        task_arguments("tune", flags->run) +
        (flags->check.empty() ? " --cases " + flags->cases : " --check " + flags->check.string()) +
        " --size " + flags->size + fmt::format(" --screen-budget {:g}", flags->screen_budget_s) +
        compile_limit_arguments(flags->compile);
    options.size_symbol = flags->size;
    if (!flags->check.empty()) return run_check(global, options, flags->check);
    if (flags->cases.empty()) {
      BLASTER_INPUT_ERROR("tune needs --cases (the sizes to tune at) or --check TABLE");
    }
    options.cases = cases_named(options.bench, flags->cases);
    // --from-runs reads a home's runs: one that is not there is a mistake, not an empty home.
    const std::unique_ptr<store> records = flags->from_runs
                                               ? require_store(global)
                                               : std::make_unique<store>(resolve_home(global.home));
    const tune_result result =
        flags->from_runs ? tune_from_runs(options, *records) : run_tune(options, *records);
    if (!result.gpu) return no_gpu(global, result.compiled);
    // Nothing to take is not a table written: each case's line says why it has no entry.
    const std::string nothing_taken =
        flags->from_runs && result.tables.empty()
            ? fmt::format(
                  "no case of --cases has a run in {} to take an entry from, so no table was "
                  "written; the lines above say why for each: tune on a GPU without --from-runs, "
                  "or give --home the home of the runs",
                  records->home().string())
            : std::string();
    const std::filesystem::path folder =
        flags->out.empty()
            ? tuned_folder(options.bench.root, options.bench.task, flags->run.candidates.front())
            : flags->out;
    nlohmann::json written = nlohmann::json::array();
    std::vector<std::string> kept_lines;
    nlohmann::json kept_json = nlohmann::json::array();
    for (const auto& table : result.tables) {
      std::vector<std::int64_t> kept;
      const std::string path =
          write_tuned_table(folder, with_earlier_entries(table, folder, kept)).string();
      written.push_back(path);
      if (!kept.empty()) {
        kept_json.push_back({{"table", path}, {"sizes", kept}});
        kept_lines.push_back(fmt::format("kept the entries {} of the earlier table {}",
                                         fmt::join(kept, ", "), path));
      }
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
                         {"confirmed", c.confirmed},
                         {"rejected", rejected_json(c)},
                         {"why", c.why},
                         {"run_id", c.run_id},
                         {"device", c.device}});
      }
      nlohmann::json j = {{"cases", cases}, {"tables", written}, {"kept", kept_json}};
      if (!nothing_taken.empty()) j["error"] = error_json("bad_input", nothing_taken)["error"];
      std::cout << j.dump(2) << '\n';
    }
    if (!nothing_taken.empty()) {
      if (!global.json) {
        std::cout << fmt::format("{:<10} {:>6}  why no entry\n", "case", flags->size);
        for (const auto& c : result.cases) std::cout << entry_line(c) << '\n';
      }
      std::cerr << "blaster: " << nothing_taken << '\n';
      return static_cast<int>(exit_bad_input);
    }
    if (global.json) return static_cast<int>(exit_ok);
    std::cout << fmt::format(
        "{:<10} {:>6}  best configuration, its time [95% interval], the "
        "default's\n",
        "case", flags->size);
    for (const auto& c : result.cases) std::cout << entry_line(c) << '\n';
    for (const auto& path : written) std::cout << "wrote " << path.get<std::string>() << '\n';
    for (const auto& line : kept_lines) std::cout << line << '\n';
    return static_cast<int>(exit_ok);
  };
}

}  // namespace blaster::cli
