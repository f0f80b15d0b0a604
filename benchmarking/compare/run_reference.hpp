#pragma once

// How `blaster compare` names the two sides it compares, and the runs each name stands for.

#include <filesystem>
#include <string_view>
#include <vector>

#include "benchmarking/compare/run_comparison.hpp"

namespace blaster {

// The runs that `reference` names, each with its report as the store recorded it:
//   latest, 12          that run of the store at `home` (--home)
//   DIR, DIR@12         a store folder (it holds blaster.db): that run, or with no @ (or
//   DIR@latest          @latest) its latest run
//   DIR                 an evidence bundle folder: a run's (its results.json is the run's
//                       report), or one that holds run bundles in its sub-folders, such as a
//                       portfolio's (runs/<id>-<task>-<case>/): every run under it, in the
//                       order of their folders' names
// A folder named like a run id is written as a path (./12). A bundle is read only once it
// verifies (its files and its runs' records, as `blaster verify` checks them; not its signature),
// each run bundle on its own where the folder that holds them has no SHA256SUMS. A missing
// folder, a bundle that does not verify, a run that is not there, a run that recorded no report,
// and a report that does not parse are input_errors that name the folder or run and say what to
// give instead. Reads only; nothing is created.
std::vector<loaded_run> load_runs(std::string_view reference, const std::filesystem::path& home);

// The runs that `reference` names for a comparison by case (`compare --across-cards`): as
// load_runs, except that a store folder (DIR) stands for every case it timed: of each task and
// case, the latest completed run that was timed on a GPU, oldest case first. A store with no such
// run is an input_error that says so.
std::vector<loaded_run> load_case_runs(std::string_view reference,
                                       const std::filesystem::path& home);

}  // namespace blaster
