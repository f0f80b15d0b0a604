#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace blaster {

class store;

// What merging one home into another came to.
struct merge_outcome {
  std::filesystem::path source;
  int runs_added = 0;
  int runs_present = 0;   // the same run was there already: nothing to do
  int objects_added = 0;  // CAS objects the home lacked
  // Runs of the source whose id names another run here: left out, and the home's own kept.
  std::vector<std::string> conflicts;
};

// Merges the home at `source` into `into`: the CAS objects it lacks (each checked against its
// name), then in one transaction every run it lacks with every row of that run. A run keeps its
// id, which its reports and bundles cite, so homes merge losslessly when their runs' ids differ
// (shards number theirs apart: store::number_runs_from); the rows a run owns (compilations,
// gates, measurements, results, ...) take new ids after the home's own, and rows that name a
// thing (devices, tasks, sources, metric definitions) map onto the row of the same name. A run
// already here is skipped, so merging again changes nothing; a run whose id names another run
// here is a conflict, named and left out. A source that is not a blaster home is an input_error.
// A home whose runs cite an object that neither its CAS nor that of `into` holds (the object was
// deleted, or never came over) is damaged, and merge_home refuses it before writing anything.
merge_outcome merge_home(store& into, const std::filesystem::path& source);

// Refuses, as an input_error that names the home, the run, the row and the object, a home one
// of whose runs cites an object its CAS lacks: merged, it would leave the home it went into
// citing nothing. A source that is not a blaster home is an input_error too. Writes nothing but
// what opening the home writes (its schema brought to this blaster's).
void require_whole_home(const std::filesystem::path& source);

}  // namespace blaster
