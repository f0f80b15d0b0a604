// blaster compare A B: per task, case and variant, whether B is faster, slower or the same as A,
// for CI to gate on regressions.
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "benchmarking/compare/comparison_table.hpp"
#include "benchmarking/compare/run_comparison.hpp"
#include "benchmarking/compare/run_reference.hpp"
#include "cli/commands.hpp"
#include "cli/error_report.hpp"
#include "evidence/store.hpp"
#include "evidence/table_renderer.hpp"
#include "portfolio/card_comparison_report.hpp"

namespace blaster::cli {

command_fn add_compare_command(CLI::App& app, const global_options& global) {
  struct flags {
    std::string a;
    std::string b;
    double threshold_pct = 2.0;
    bool allow_mismatch = false;
    bool across_cards = false;
  };
  auto f = std::make_shared<flags>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Compare two runs (or two sets of runs) variant by variant: FAST, SLOW, SAME or "
      "INCONCLUSIVE from the intervals of their times; exit 1 when anything got slower or was "
      "rejected.");
  cmd->footer(fmt::format(
      "A and B are each written as:\n"
      "  latest, 12          a run of the store at --home (its latest, or that id)\n"
      "  DIR                 a store folder (it holds blaster.db): its latest run\n"
      "  DIR@12, DIR@latest  a run of that store folder\n"
      "  DIR                 an evidence bundle (blaster export, blaster portfolio): its run, or\n"
      "                      every run bundle in its sub-folders (a portfolio's runs/)\n"
      "A folder named like a run id is written as a path: ./12. A bundle is verified before it "
      "is read, its files and its runs' records as `blaster verify` checks them (not its "
      "signature: `blaster verify --pubkey` checks that); one that does not verify is refused.\n\n"
      "Results pair by task, case and variant label. A pair whose runs differ in GPU model, "
      "shape, dtype, timing mode or protocol (target_sample_ms, min and max samples, max_noise, "
      "rotate_buffers, min_clock_fraction, sessions) is refused as MISMATCH, with what differs; "
      "--allow-mismatch compares it and marks the row and the notes.\n\n"
      "{}\n\n"
      "Statuses beside those: MISMATCH (refused, above), ONLY_A and ONLY_B (the variant is on one "
      "side only), REJECTED (passed in A, rejected in B: its reason is the note), FIXED "
      "(rejected in A, passed in B), UNTIMED (not timed on both sides).\n\n"
      "With --across-cards, A and B are two cards' runs of the same cases (each a portfolio "
      "bundle, a run's bundle, or a store folder, which stands for the latest run timed on a GPU "
      "of each task and case it holds) and each case measured on both is one row: its two "
      "times, their ratio with its interval, beside the ratio of the two cards' measured "
      "ceilings for the case's bound. {}\n"
      "A DEPARTS row is flagged, with each card's variant, ceiling and diagnosis and a hint: "
      "tuned for one card (run `blaster tune` on the other) or a measurement problem. --threshold "
      "is tau there, 10% unless given. Refused with exit 2: the same GPU model on both sides, a "
      "side of several models or of runs timed on no GPU, no case in common, a folder that is "
      "not a bundle or store, a bundle that does not verify. Exit 0 once the cases are compared, "
      "whatever they show; --json prints the comparison as a portfolio's results.json holds it "
      "(\"across_cards\").\n\n"
      "Examples:\n"
      "  blaster compare 11 12\n"
      "  blaster compare ci-baseline/ latest --threshold 5\n"
      "  blaster compare artifacts/core10-h200-v1 run-bundle --json\n"
      "  blaster compare --across-cards artifacts/core10-h200-v1 artifacts/core10-h100-v1\n\n"
      "Exit status: 0 nothing is SLOW or REJECTED (a MISMATCH compares nothing, so it is no "
      "regression: the notes say how many pairs were refused); 1 something is SLOW or REJECTED "
      "(with --json the output carries an error of code regression), or the machine failed (the "
      "message says so); 2 bad input: a folder that is neither a store nor a bundle, a bundle that "
      "does not verify, a run that is not there or recorded no report, a report that does not "
      "parse.",
      comparison_statistics, card_comparison_statistics));
  cmd->add_option("A", f->a, "the runs before: a run id, latest, DIR, DIR@RUN or a bundle")
      ->required();
  cmd->add_option("B", f->b, "the runs after, written the same way")->required();
  CLI::Option* threshold =
      cmd->add_option("--threshold", f->threshold_pct,
                      "tau: a change within this of 1 is SAME, beyond it FAST or SLOW [%]; with "
                      "--across-cards, a departure within it AGREES (default there 10)")
          ->check(finite_range(0.0, 99.0))
          ->capture_default_str();
  cmd->add_flag("--allow-mismatch", f->allow_mismatch,
                "compare pairs whose GPU, shape, dtype, mode or protocol differ, marking each");
  cmd->add_flag("--across-cards", f->across_cards,
                "A and B are two GPU models' runs of the same cases: each case's time ratio "
                "beside its ceilings' ratio, flagging the cases that depart")
      ->excludes("--allow-mismatch");
  return [f, threshold, &global]() {
    const std::filesystem::path home = resolve_home(global.home);
    if (f->across_cards) {
      const card_comparison cards =
          compare_cards(load_case_runs(f->a, home), load_case_runs(f->b, home), f->a, f->b,
                        {.threshold = threshold->count() > 0 ? f->threshold_pct / 100.0 : 0.10});
      if (global.json) {
        std::cout << to_json(cards).dump(2) << '\n';
      } else {
        make_renderer(global.format)->render(card_comparison_table(cards), std::cout);
      }
      return static_cast<int>(exit_ok);
    }
    const std::vector<loaded_run> a = load_runs(f->a, home);
    const std::vector<loaded_run> b = load_runs(f->b, home);
    const run_comparison comparison = compare_runs(
        a, b, {.threshold = f->threshold_pct / 100.0, .allow_mismatch = f->allow_mismatch});
    const result_table table = comparison_table(comparison, a, b);
    const std::string regression = fmt::format(
        "regression from {} to {}: {} SLOW, {} REJECTED; see the rows marked so", f->a, f->b,
        comparison.count(comparison_status::slow), comparison.count(comparison_status::rejected));
    if (global.json) {
      // One JSON object on every exit: the table, and the error that comes with exit 1.
      std::ostringstream text;
      make_renderer("json")->render(table, text);
      nlohmann::json j = nlohmann::json::parse(text.str());
      if (comparison.regressed()) j["error"] = error_json("regression", regression)["error"];
      std::cout << j.dump(2) << '\n';
    } else {
      make_renderer(global.format)->render(table, std::cout);
    }
    if (!comparison.regressed()) return static_cast<int>(exit_ok);
    std::cerr << "blaster: " << regression << '\n';
    return static_cast<int>(exit_failure);
  };
}

}  // namespace blaster::cli
