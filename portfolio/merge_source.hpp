#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include "evidence/bundle_merge.hpp"
#include "evidence/store_merge.hpp"
#include "portfolio/portfolio_runner.hpp"

namespace blaster {

class ed25519_key;
class store;

// A source of `blaster merge`, checked before anything is merged.
struct merge_source {
  std::filesystem::path path;
  merge_source_kind kind = merge_source_kind::home;
  bundle_verification verified;  // a bundle's, without problems
  nlohmann::json progress;       // a portfolio bundle's (read_bundle_progress); null otherwise
};

struct merge_source_options {
  const ed25519_key* public_key = nullptr;  // a signed bundle's signer
  bool allow_unchecked_signature = false;
};

// Checks a source: a home whose runs cite only objects it holds (require_whole_home), or an
// evidence bundle that verifies as `blaster verify` verifies it
// (verify_evidence_bundle) and, when it is a portfolio's, says what the portfolio's progress needs
// (read_bundle_progress). Anything else is an input_error naming the source and, for a bundle
// that does not verify, its problems; nothing is written.
merge_source check_merge_source(const std::filesystem::path& path,
                                const merge_source_options& options);

// What merging one source came to: its runs and objects, and its portfolio items.
struct source_merge {
  merge_outcome runs;
  progress_merge progress;
};

// Merges a checked source into records' home: a home by merge_home and merge_portfolio_progress,
// a bundle by merge_bundle and merge_bundle_progress, so that a bundle leaves the home as the home
// that wrote it would.
source_merge merge_checked_source(store& records, const merge_source& source);

}  // namespace blaster
