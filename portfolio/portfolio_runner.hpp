#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarking/runner/bench_runner.hpp"
#include "benchmarking/runner/warm_bench.hpp"
#include "portfolio/suite.hpp"

namespace blaster {

class store;

// One bench of a portfolio: a case of a task of the suite.
struct portfolio_item {
  std::string id;  // the suite entry's, "036"
  std::string task;
  std::string case_name;
  std::optional<std::string> mode;  // none: the task's own
  [[nodiscard]] std::string key() const { return task + "/" + case_name; }
};

// What a portfolio learned of one item: its run in the store and the run's report, recorded now
// or by an earlier, interrupted portfolio.
struct portfolio_outcome {
  portfolio_item item;
  std::int64_t run_id = 0;
  bench_report report;
  bool resumed = false;
};

struct portfolio_options {
  std::filesystem::path root;
  std::string arch;        // empty: the GPU's
  int sessions = 0;        // 0: the suite's protocol
  bool fresh = false;      // true: redo every item, whatever an earlier portfolio recorded
  bool sanitize = true;    // the gate's small cases also under compute-sanitizer
  std::string command;     // as the user typed it, for the record
  compile_limits compile;  // every bench's compile sandbox and limits
  // A share of the suite: the entries whose index in the suite is shard - 1 modulo shards, whole,
  // so that each entry's cases stay one series. 1 of 1: every entry.
  int shard = 1;
  int shards = 1;
  // Every case compiled and recorded, none timed, with no GPU looked for: a suite's build
  // checked where there is none. Its progress is another portfolio's than a timed one's.
  bool compile_only = false;
  // Every params configuration of each candidate timed, whatever a tuned table names: the runs
  // that `tune --from-runs` turns into the bundle's tables. The tables then change nothing that
  // runs, so they count in no item's sources. Its progress is another portfolio's.
  bool all_params = false;
  // Nothing benched and no GPU looked for: the outcomes are the items that earlier portfolios of
  // the same suite and protocol recorded, and the items left are left out (--recorded): the
  // bundle of the cases done so far.
  bool recorded_only = false;
  // The GPUs to run on (--gpus, choose_gpus): each runs whole entries, one at a time, taking the
  // next entry when it is done with its last, so that every comparison stays on one GPU. Each
  // GPU records its runs through a connection of its own to the same home. None: this
  // process's device 0, or those choose_gpus picks.
  std::vector<gpu_lane> gpus;
  // Picks the GPUs (--gpus) once there is a case left to run, so that a portfolio whose every
  // case is recorded writes its bundle where there is no GPU; unset: gpus as given.
  std::function<std::vector<gpu_lane>()> choose_gpus;
};

// The suite's cases, in its order, that shard `shard` of `shards` runs: whole entries, those whose
// index in the suite is shard - 1 modulo shards.
std::vector<portfolio_item> portfolio_items(const suite& s, int shard = 1, int shards = 1);

// What a recorded item of a task holds for: SHA-256 over the paths under root and the bytes of
// the task's files (tasks/<task>/), its candidates, the shared headers they include
// (kernels/common/, as read_candidate finds them) and the tuned tables bench takes their
// configurations from (kernels/<task>/tuned/). `exact` names the included headers only, or every
// shared header where a candidate file has no plan (unread, refused): its includes are unknown. An
// item recorded with `every_common_header`, as earlier portfolios recorded it, holds as well.
// Given the device its run ran on (as tables name it, tuned_table.hpp), the tables of other GPUs
// are left out, since bench never reads them there: tuning one GPU redoes none of another's
// cases. A table whose name states no device, or does not parse, counts wherever it lies.
// Without `tables` (a portfolio that times every configuration) none counts. The candidates are
// those bench judges under `limits` (discover_candidates): a Triton file left out where there is
// no Triton is not in the digest, so that a machine with Triton redoes the item with it.
struct task_sources {
  std::string exact;
  std::string every_common_header;
};
task_sources task_sources_sha256(const std::filesystem::path& root, const std::string& task,
                                 const std::optional<std::string>& device = std::nullopt,
                                 bool tables = true, const compile_limits& limits = {});

// The first run id of shard i of a sharded portfolio: shards number their runs apart, so that
// their homes merge (blaster merge) with every run keeping the id its reports cite.
std::int64_t shard_first_run_id(int shard);

// Benches one item as a run of the entry's warm series; the portfolio's default runs run_bench
// in this process.
using portfolio_bench = std::function<bench_report(const bench_options&, store&, warm_bench&)>;

// Benches every case of every task of the suite in order (over options.gpus, entries side by
// side), each a bench under the suite's protocol recorded in the store; the outcomes come back
// in the suite's order. What an earlier portfolio of the same suite and protocol
// recorded is not redone: <home>/portfolio/<suite>.progress.json names each finished item's run
// and report, and is rewritten atomically after each, so a killed portfolio resumes at the item
// it was in. The cases of an entry form one warm series: each configuration is gated (and
// sanitized) once, on data that holds every case the entry still times. An item is redone when its
// task's files, its candidates, the headers they include or its tuned tables changed since it
// was recorded (task_sources). Throws cuda::gpu_unavailable when there is no GPU (after
// the first item says so). With options.recorded_only, only the recorded items come back.
std::vector<portfolio_outcome> run_portfolio(const suite& s, const portfolio_options& options,
                                             store& records, const portfolio_bench& bench);

// <home>/portfolio/<suite>.progress.json, or <suite>.compile-only.progress.json for a compile-only
// portfolio (progress_file_name): the two never take each other's place, so that checking a
// suite's build does not make the timed portfolio start over, nor the other way round.
std::filesystem::path portfolio_progress_file(const store& records, const suite& s,
                                              bool compile_only = false);
std::string progress_file_name(const std::string& suite_name, bool compile_only);

// The items of options' shard with no outcome among `outcomes` (what --recorded left out), in the
// suite's order.
std::vector<portfolio_item> items_not_run(const suite& s, const portfolio_options& options,
                                          const std::vector<portfolio_outcome>& outcomes);

// What merging a home's portfolio progress into another's came to.
struct progress_merge {
  int items_added = 0;
  std::vector<std::string> conflicts;
};

// Adds the finished items of every portfolio recorded in `source` (its
// portfolio/<suite>.progress.json) to the same suite's progress of `records`' home, after
// merge_home brought their runs over: an item whose run is not there (or is another run of that
// id), one recorded here by another run, and a progress file of another suite version or
// protocol are conflicts, named and left out. A portfolio started again in the merged home
// resumes every merged item.
progress_merge merge_portfolio_progress(store& records, const std::filesystem::path& source);

// The file of a portfolio's bundle that carries its progress, so that a home that merges the
// bundle continues the portfolio: {"identity", "done"} as <home>/portfolio/<suite>.progress.json
// holds them, with the done items of the bundle's rows alone.
inline constexpr std::string_view bundle_progress_name = "progress.json";

// What a bundle of `outcomes` carries as its progress: the identity of the suite's progress in
// records' home and each outcome's entry there (its run, report, sources' digest and device).
// Null where that progress does not name every outcome's run.
nlohmann::json portfolio_bundle_progress(const store& records, const suite& s,
                                         const std::vector<portfolio_outcome>& outcomes);

// A portfolio bundle's progress, read before anything of the bundle is merged: null for a bundle
// that is not a portfolio's (its results.json has no rows); an input_error for a portfolio's
// bundle without one (written before bundles carried it), since its items could not continue the
// portfolio, or with one that is not a suite's progress.
nlohmann::json read_bundle_progress(const std::filesystem::path& bundle);

// Adds the done items of a portfolio bundle's progress (read_bundle_progress) to the suite's
// progress of records' home, after merge_bundle brought their runs over, by the rules of
// merge_portfolio_progress.
progress_merge merge_bundle_progress(store& records, const std::filesystem::path& bundle,
                                     const nlohmann::json& progress);

}  // namespace blaster
