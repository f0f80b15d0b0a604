#pragma once

#include <filesystem>
#include <string_view>

#include "evidence/bundle_verifier.hpp"
#include "evidence/store_merge.hpp"

namespace blaster {

class store;

// What `blaster merge` was given.
enum class merge_source_kind {
  home,    // a folder with a blaster.db
  bundle,  // an evidence bundle: SHA256SUMS beside a run.json (export), a runs/ folder
           // (a portfolio's) or the run.json of a trajectory export's sessions
};

std::string_view name_of(merge_source_kind kind);

// Which kind of source `path` is; a folder that is neither is an input_error.
merge_source_kind merge_source_kind_of(const std::filesystem::path& path);

// Throws an input_error that names the problems of a bundle that did not verify.
void require_verified(const bundle_verification& verified);

// Merges the runs of an evidence bundle into `into` as merge_home merges the home that wrote it:
// each run keeps its id, the rows a run owns take ids after the home's own, rows that name a
// thing map onto the row of that name, a run already here is skipped and a run whose id names
// another run here is a conflict, named and left out. `verified` is the bundle's verification as
// `blaster verify` makes it; one with problems is refused (require_verified) before anything is
// written. The rows are those of every run.json in the bundle (run_catalog::records_of),
// recorded into a temporary home at the schema version that wrote them and brought to this
// blaster's as any home is; the objects they cite come from the run's objects/ or the bundle's,
// each checked against its name. Rows that contradict each other or cite a row the bundle lacks
// are an input_error, and nothing is written. An optimize step keeps the bench run that judged
// it only where that run is in the bundle too (a trajectory bundle's runs/).
merge_outcome merge_bundle(store& into, const bundle_verification& verified);

}  // namespace blaster
