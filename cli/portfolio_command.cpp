// blaster portfolio --suite NAME: a whole suite under the confirmation protocol, published as
// an evidence bundle.
#include <cstdio>
#include <iostream>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "benchmarking/compare/run_reference.hpp"
#include "benchmarking/runner/bench_runner.hpp"
#include "benchmarking/runner/gpu_lanes.hpp"
#include "cli/commands.hpp"
#include "cli/compile_flags.hpp"
#include "cli/task_flags.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/worker_process.hpp"
#include "evidence/signature.hpp"
#include "evidence/store.hpp"
#include "portfolio/card_comparison_report.hpp"
#include "portfolio/portfolio_provenance.hpp"
#include "portfolio/portfolio_report.hpp"
#include "portfolio/portfolio_runner.hpp"
#include "portfolio/suite.hpp"

namespace blaster::cli {
namespace {

struct portfolio_flags {
  std::string suite;
  std::filesystem::path out;
  int sessions = 0;
  std::optional<std::filesystem::path> pytorch;
  std::optional<std::filesystem::path> sign;
  std::optional<std::filesystem::path> tables;
  std::string arch;
  bool fresh = false;
  bool no_sanitize = false;
  std::string shard;  // "i/N"
  std::string gpus;
  bool compile_only = false;
  bool recorded = false;
  bool all_params = false;
  std::string across_cards;  // another card's portfolio bundle or home
  compile_limit_flags compile;
};

// "i/N" with 1 <= i <= N.
std::pair<int, int> parse_shard(const std::string& text) {
  int shard = 0;
  int shards = 0;
  char slash = 0;
  char rest = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%c", &shard, &slash, &shards, &rest) != 3 || slash != '/' ||
      shards < 1 || shard < 1 || shard > shards) {
    BLASTER_INPUT_ERROR("--shard {}: give i/N, the i-th of N shares of the suite (1 <= i <= N)",
                        text);
  }
  return {shard, shards};
}

nlohmann::json read_pytorch(const std::filesystem::path& file) {
  const std::optional<std::string> bytes = read_file_if_exists(file);
  if (!bytes) {
    BLASTER_INPUT_ERROR("--pytorch {}: no such file; scripts/benchmark_pytorch.py writes one",
                        file.string());
  }
  nlohmann::json j = nlohmann::json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("cases") || !j["cases"].is_array()) {
    BLASTER_INPUT_ERROR(
        "--pytorch {}: not the JSON scripts/benchmark_pytorch.py writes (an object with a "
        "\"cases\" array)",
        file.string());
  }
  return j;
}

// A compile-only portfolio: per case its run, how many variants compiled and which did not.
int print_compiled(const std::vector<portfolio_outcome>& outcomes, bool json) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& o : outcomes) {
    int compiled = 0;
    std::vector<std::string> failed;
    for (const auto& r : o.report.results) {
      if (r.status == "compiled") {
        ++compiled;
      } else {
        failed.push_back(fmt::format("{} ({})", r.label, r.message));
      }
    }
    rows.push_back({{"id", o.item.id},
                    {"task", o.item.task},
                    {"case", o.item.case_name},
                    {"run_id", o.run_id},
                    {"resumed", o.resumed},
                    {"compiled", compiled},
                    {"failed", failed}});
    if (!json) {
      fmt::print("{} {} case {}: run {}, {} variants compiled{}\n", o.item.id, o.item.task,
                 o.item.case_name, o.run_id, compiled,
                 failed.empty() ? "" : fmt::format("; failed: {}", fmt::join(failed, "; ")));
    }
  }
  if (json) std::cout << nlohmann::json{{"compiled", rows}}.dump(2) << '\n';
  return static_cast<int>(exit_ok);
}

}  // namespace

command_fn add_portfolio_command(CLI::App& app, const global_options& global) {
  auto f = std::make_shared<portfolio_flags>();
  CLI::App* cmd = app.add_subcommand(
      "portfolio",
      "Bench every case of every task of a suite under the confirmation protocol and write the "
      "evidence bundle: report, results, figure, every run's own bundle, SHA256SUMS.");
  cmd->footer(
      "A suite is portfolio/suites/<name>.json: its tasks, the cases of each (the canonical one "
      "and KernelBench's large one), the mode of each and the protocol. Each case is a `blaster "
      "bench --case C --sessions N` recorded in the store; a portfolio that is killed resumes at "
      "the case it was in when started again (the store keeps <home>/portfolio/<suite>.progress"
      ".json), unless --fresh.\n\n"
      "With --pytorch FILE (from scripts/benchmark_pytorch.py, run where PyTorch and the same GPU "
      "are) the report gives each case's ratio to PyTorch eager and torch.compile in the same "
      "mode.\n\n"
      "With --shard i/N, only the i-th of N shares of the suite's entries is run, into this "
      "home, its runs numbered from i million; run each shard anywhere (another GPU, a Slurm "
      "task), then `blaster merge` their homes into one and run the portfolio there without "
      "--shard: every case is resumed from the store and the whole bundle written, with no GPU.\n\n"
      "With --recorded nothing is benched and no GPU looked for: the bundle holds the cases that "
      "earlier portfolios of the suite (or of --shard's share) recorded in this home, and its "
      "report names the cases not run yet. A portfolio run again later finishes the rest.\n\n"
      "With --tables DIR the bundle carries the tuned tables that its own runs measured, under "
      "kernels/<task>/tuned/: write them first with `blaster tune --task T --candidate F --cases "
      "all --from-runs --out DIR/T/tuned/C` in this home (C: F's name without .cu). Every entry "
      "must name a run of the bundle and be the fastest configuration that run confirmed; tables "
      "of other GPUs are left out. `blaster verify` holds each entry to its run again.\n\n"
      "With --across-cards OTHER (another card's portfolio bundle, verified first, or its "
      "home) the report gains a section \"The two cards against each other\" and results.json "
      "its \"across_cards\": for each case measured on both cards, the two times and their "
      "ratio beside the ratio of the two cards' ceilings for the case's bound, the cases that "
      "depart flagged with each card's diagnosis (as `blaster compare --across-cards` shows "
      "them). Usual with --recorded, to add the section to the bundle of the cases done.\n\n"
      "Exit status: 0 the bundle is written; 2 bad input (suite, --out, --pytorch, --sign, "
      "--tables, --across-cards: not a bundle or home, the same GPU model, no case in common); "
      "3 no GPU.\n\n"
      "Examples:\n"
      "  blaster portfolio --suite core10 --out artifacts/core10-h200-v1 --pytorch torch.json\n"
      "  blaster verify artifacts/core10-h200-v1");
  cmd->add_option("--suite", f->suite, "a suite's name (portfolio/suites/NAME.json) or file")
      ->required();
  cmd->add_option("--out", f->out, "the bundle folder to create (default: <suite>-bundle)");
  cmd->add_option("--sessions", f->sessions, "sessions per case (default: the suite's, 5)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--pytorch", f->pytorch, "PyTorch's times, from scripts/benchmark_pytorch.py");
  cmd->add_option("--sign", f->sign, "sign SHA256SUMS with this private key (PREFIX.key)");
  cmd->add_option("--tables", f->tables,
                  "put the tuned tables this portfolio's runs measured into the bundle: a folder "
                  "laid out as kernels/ (<task>/tuned/<candidate>/<table>.json)");
  cmd->add_option("--arch", f->arch, "compile for this target (default: the GPU's)");
  cmd->add_flag("--fresh", f->fresh, "redo every case, whatever an earlier portfolio recorded");
  cmd->add_flag("--no-sanitize", f->no_sanitize,
                "skip compute-sanitizer (by default the gate's small cases of every candidate "
                "also run under memcheck, racecheck, initcheck and synccheck)");
  cmd->add_flag("--compile-only", f->compile_only,
                "compile every case's variants and record each as a run, timing nothing and "
                "looking for no GPU; prints what compiled instead of writing a bundle");
  cmd->add_flag("--all-params", f->all_params,
                "time every params configuration of each candidate, also where a tuned table "
                "names one: the runs `tune --from-runs` turns into --tables. The tables then "
                "change nothing that runs, and a table written later redoes no case; --recorded "
                "takes it too");
  cmd->add_flag("--recorded", f->recorded,
                "bench nothing: write the bundle of the cases recorded so far, naming the cases "
                "not run yet")
      ->excludes(cmd->get_option("--fresh"))
      ->excludes(cmd->get_option("--compile-only"));
  cmd->add_option("--across-cards", f->across_cards,
                  "another card's portfolio bundle (or home): the report's section comparing the "
                  "two cards case by case")
      ->excludes(cmd->get_option("--compile-only"));
  cmd->add_option("--shard", f->shard,
                  "i/N: run only the i-th of N shares of the suite's entries, into this home, "
                  "numbering its runs apart; `blaster merge` combines the shards' homes");
  add_gpus_flag(*cmd, f->gpus,
                "each GPU runs whole tasks of the suite, taking the next when it is done, so "
                "that every comparison stays on one GPU; the runs go into this home side by "
                "side");
  add_compile_limit_flags(*cmd, f->compile);
  return [f, &global]() {
    require_format(global, {"table", "md", "json"}, "portfolio");
    std::optional<ed25519_key> key;
    if (f->sign) key = read_private_key(*f->sign);
    const nlohmann::json pytorch = f->pytorch ? read_pytorch(*f->pytorch) : nlohmann::json();
    portfolio_options options;
    options.root = resolve_root(global);
    options.arch = f->arch;
    options.sessions = f->sessions;
    options.fresh = f->fresh;
    options.sanitize = !f->no_sanitize;
    options.compile = to_compile_limits(f->compile);
    if (!f->shard.empty()) std::tie(options.shard, options.shards) = parse_shard(f->shard);
    options.compile_only = f->compile_only;
    options.recorded_only = f->recorded;
    options.all_params = f->all_params;
    std::optional<gpu_choice> gpus;
    if (!f->gpus.empty()) {
      if (f->compile_only || f->recorded) {
        BLASTER_INPUT_ERROR("--gpus with {}: that portfolio uses no GPU; drop one of them",
                            f->compile_only ? "--compile-only" : "--recorded");
      }
      gpus = parse_gpu_choice(f->gpus);
    }
    options.command =
        "blaster portfolio --suite " + f->suite + (f->no_sanitize ? " --no-sanitize" : "") +
        (f->shard.empty() ? "" : " --shard " + f->shard) +
        (f->gpus.empty() ? "" : " --gpus " + f->gpus) + (f->compile_only ? " --compile-only" : "") +
        (f->all_params ? " --all-params" : "") +
        compile_limit_arguments(f->compile);
    const suite s = load_suite(options.root, f->suite);
    const std::filesystem::path out =
        f->out.empty() ? std::filesystem::path(s.name + "-bundle") : f->out;
    // A missing GPU is cuda::gpu_unavailable, which main turns into exit 3.
    if (gpus)
      options.choose_gpus = [choice = *gpus] { return choose_gpus(choice, this_executable()); };
    store records(resolve_home(global.home));
    // Read (and verified) before any case is benched: a wrong folder is said at once.
    std::optional<std::vector<loaded_run>> other_card;
    if (!f->across_cards.empty()) other_card = load_case_runs(f->across_cards, records.home());
    if (options.shards > 1) records.number_runs_from(shard_first_run_id(options.shard));
    const std::vector<portfolio_outcome> outcomes = run_portfolio(
        s, options, records, [](const bench_options& o, store& r, warm_bench& series) {
          return run_bench(o, r, &series);
        });
    if (options.compile_only) return print_compiled(outcomes, global.json);
    if (options.recorded_only && outcomes.empty()) {
      BLASTER_INPUT_ERROR(
          "suite {}: this home ({}) has no case of it recorded under its protocol; run the "
          "portfolio without --recorded, or give --home the home that ran it",
          s.name, records.home().string());
    }
    const std::vector<bundle_table> tables =
        f->tables ? tables_for_bundle(*f->tables, outcomes) : std::vector<bundle_table>();
    nlohmann::json summary =
        summarize_portfolio(s, outcomes, pytorch, items_not_run(s, options, outcomes),
                            portfolio_provenance(records, outcomes));
    if (!tables.empty()) summary["tuned_tables"] = tuned_tables_json(tables);
    if (other_card) {
      summary["across_cards"] = across_cards_summary(outcomes, *other_card, f->across_cards);
    }
    write_portfolio_bundle(records, s, outcomes, summary, pytorch, out, key ? &*key : nullptr,
                           tables);
    if (global.json) {
      std::cout << summary.dump(2) << '\n';
    } else {
      std::cout << render_portfolio_markdown(summary)
                << fmt::format("\nBundle: {}\n", out.string());
    }
    return static_cast<int>(exit_ok);
  };
}

}  // namespace blaster::cli
