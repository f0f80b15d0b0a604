// blaster merge SOURCE...: other homes (a portfolio's shards, runs made on other machines) and
// evidence bundles into this one, losslessly.
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/error_report.hpp"
#include "evidence/bundle_merge.hpp"
#include "evidence/signature.hpp"
#include "evidence/store.hpp"
#include "optimize/trajectory_claims.hpp"
#include "portfolio/merge_source.hpp"

namespace blaster::cli {

command_fn add_merge_command(CLI::App& app, const global_options& global) {
  struct flags {
    std::vector<std::filesystem::path> sources;
    std::optional<std::filesystem::path> pubkey;
    bool allow_unchecked = false;
  };
  auto f = std::make_shared<flags>();
  CLI::App* cmd = app.add_subcommand(
      "merge",
      "Merge other homes, or evidence bundles, into this one (--home): their objects, runs and "
      "portfolios.");
  cmd->footer(
      "Each source's CAS objects come over checked against their names, then every run this "
      "home lacks with all its rows, keeping its run id (the id its reports and bundles cite), "
      "then the portfolio items those runs finished. A run or item already here is skipped, so "
      "merging again, as shards arrive, changes nothing. A run whose id names another run here, "
      "or an item recorded here by another run, is a conflict: named, left out, never written "
      "over. Shards of one portfolio (`blaster portfolio --shard i/N`) number their runs apart, "
      "so that they merge without conflict; `blaster portfolio --suite S` run again in the merged "
      "home writes the whole bundle.\n\n"
      "A source may be an evidence bundle instead of a home: a run's (`blaster export`), a "
      "portfolio's (`blaster portfolio --out`) or a trajectory export. It is verified first as "
      "`blaster verify` verifies it (--pubkey, --allow-unchecked-signature for a signed one); one "
      "that does not verify is refused, naming its problems, and nothing is merged. Its runs then "
      "come over from their run.json and objects/ as from the home that wrote it, and a "
      "portfolio's finished cases (its progress.json) enter this home's progress: `blaster "
      "portfolio --suite S` here resumes after them, and with --recorded writes the bundle again. "
      "A portfolio's bundle without progress.json (an earlier blaster's) is refused. Every "
      "source is checked before any is merged.\n\n"
      "Exit status: 0 merged; 2 a source is neither a blaster home nor a bundle, or a bundle does "
      "not verify or lacks its portfolio's progress (nothing merged); 5 a conflict was named "
      "(the rest was merged).\n\n"
      "Examples:\n"
      "  blaster merge shard1/.blaster shard2/.blaster --home merged\n"
      "  blaster merge session1-bundle --home next && blaster portfolio --suite infer --home next\n"
      "  blaster portfolio --suite core10 --home merged --out core10-bundle");
  cmd->add_option("sources", f->sources, "the homes and evidence bundles to merge into this one")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--pubkey", f->pubkey,
                  "a signed bundle's signer (PREFIX.pub): its signature must then verify");
  cmd->add_flag("--allow-unchecked-signature", f->allow_unchecked,
                "merge a signed bundle without checking its signature (its files are still "
                "checked)");
  return [f, &global]() {
    std::optional<ed25519_key> key;
    if (f->pubkey) key = read_public_key(*f->pubkey);
    // Every source is checked, and every bundle verified, before anything is written.
    std::vector<merge_source> sources;
    for (const auto& path : f->sources) {
      sources.push_back(check_merge_source(
          path,
          {.public_key = key ? &*key : nullptr, .allow_unchecked_signature = f->allow_unchecked}));
      // A trajectory export is held to its records as `verify` holds it.
      if (sources.back().kind == merge_source_kind::bundle) {
        check_trajectory_claims(sources.back().verified);
        require_verified(sources.back().verified);
      }
    }
    store records(resolve_home(global.home));
    nlohmann::json merged = nlohmann::json::array();
    std::vector<std::string> all_conflicts;
    for (const auto& source : sources) {
      const source_merge s = merge_checked_source(records, source);
      const merge_outcome& m = s.runs;
      std::vector<std::string> conflicts = m.conflicts;
      conflicts.insert(conflicts.end(), s.progress.conflicts.begin(), s.progress.conflicts.end());
      all_conflicts.insert(all_conflicts.end(), conflicts.begin(), conflicts.end());
      merged.push_back({{"source", source.path.string()},
                        {"kind", name_of(source.kind)},
                        {"runs_added", m.runs_added},
                        {"runs_present", m.runs_present},
                        {"objects_added", m.objects_added},
                        {"portfolio_items_added", s.progress.items_added},
                        {"conflicts", conflicts}});
      if (!global.json) {
        fmt::print("{}{}: {} runs added, {} already here, {} objects, {} portfolio items\n",
                   source.path.string(),
                   source.kind == merge_source_kind::bundle ? " (bundle)" : "", m.runs_added,
                   m.runs_present, m.objects_added, s.progress.items_added);
        for (const auto& c : conflicts) fmt::print("  conflict, left out: {}\n", c);
      }
    }
    // One JSON object on every exit: what was merged, and the error that comes with exit 5.
    const std::string message = fmt::format(
        "{} left out as {}: {}; the rest was merged, and this home's own runs and items were kept",
        all_conflicts.size(), all_conflicts.size() == 1 ? "a conflict" : "conflicts",
        fmt::join(all_conflicts, "; "));
    if (global.json) {
      nlohmann::json j = {{"merged", merged}};
      if (!all_conflicts.empty()) j["error"] = error_json("conflict", message)["error"];
      std::cout << j.dump(2) << '\n';
    }
    if (all_conflicts.empty()) return static_cast<int>(exit_ok);
    std::cerr << "blaster: " << message << '\n';
    return exit_merge_conflict;
  };
}

}  // namespace blaster::cli
