// blaster merge HOME...: other homes (a portfolio's shards, runs made on other machines) into
// this one, losslessly.
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "evidence/store.hpp"
#include "evidence/store_merge.hpp"
#include "portfolio/portfolio_runner.hpp"

namespace blaster::cli {

command_fn add_merge_command(CLI::App& app, const global_options& global) {
  auto sources = std::make_shared<std::vector<std::filesystem::path>>();
  CLI::App* cmd = app.add_subcommand(
      "merge", "Merge other homes into this one (--home): their objects, runs and portfolios.");
  cmd->footer(
      "Each source's CAS objects come over checked against their names, then every run this "
      "home lacks with all its rows, keeping its run id (the id its reports and bundles cite), "
      "then the portfolio items those runs finished. A run or item already here is skipped, so "
      "merging again, as shards arrive, changes nothing. A run whose id names another run here, "
      "or an item recorded here by another run, is a conflict: named, left out, never written "
      "over. Shards of one portfolio (`blaster portfolio --shard i/N`) number their runs apart, "
      "so that they merge without conflict; `blaster portfolio --suite S` run again in the merged "
      "home writes the whole bundle.\n\n"
      "Exit status: 0 merged; 2 a source is not a blaster home; 5 a conflict was named (the rest "
      "was merged).\n\n"
      "Examples:\n"
      "  blaster merge shard1/.blaster shard2/.blaster --home merged\n"
      "  blaster portfolio --suite core10 --home merged --out core10-bundle");
  cmd->add_option("homes", *sources, "the homes to merge into this one")
      ->required()
      ->check(CLI::ExistingDirectory);
  return [sources, &global]() {
    store records(resolve_home(global.home));
    nlohmann::json merged = nlohmann::json::array();
    bool conflict = false;
    for (const auto& source : *sources) {
      const merge_outcome m = merge_home(records, source);
      const progress_merge p = merge_portfolio_progress(records, source);
      std::vector<std::string> conflicts = m.conflicts;
      conflicts.insert(conflicts.end(), p.conflicts.begin(), p.conflicts.end());
      conflict = conflict || !conflicts.empty();
      merged.push_back({{"source", source.string()},
                        {"runs_added", m.runs_added},
                        {"runs_present", m.runs_present},
                        {"objects_added", m.objects_added},
                        {"portfolio_items_added", p.items_added},
                        {"conflicts", conflicts}});
      if (!global.json) {
        fmt::print("{}: {} runs added, {} already here, {} objects, {} portfolio items\n",
                   source.string(), m.runs_added, m.runs_present, m.objects_added, p.items_added);
        for (const auto& c : conflicts) fmt::print("  conflict, left out: {}\n", c);
      }
    }
    if (global.json) std::cout << nlohmann::json{{"merged", merged}}.dump(2) << '\n';
    return conflict ? exit_merge_conflict : static_cast<int>(exit_ok);
  };
}

}  // namespace blaster::cli
