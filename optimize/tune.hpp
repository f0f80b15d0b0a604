#pragma once

// `blaster tune`: for each case, every params combination of one candidate gated and timed in a
// first session, the fastest few confirmed under the session protocol (bench's --confirm-best);
// the fastest confirmed one at each size is that size's entry of a tuned table in the engines'
// format (tuned_table.hpp), one table per shape.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "benchmarking/report/bench_report.hpp"
#include "benchmarking/report/case_summary.hpp"
#include "benchmarking/runner/bench_runner.hpp"
#include "benchmarking/statistics/statistics.hpp"
#include "benchmarking/tuned/tuned_table.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {

class store;

struct tune_options {
  // The task, its one candidate file, timing and the confirmation protocol (sessions,
  // confirm_best); timed_case is set per case.
  bench_options bench;
  std::vector<timed_case> cases;
  std::string size_symbol;  // what the table's entries are keyed by: "T" (tokens) or "M"
};

// A variant a run rejected, with the evidence.
struct rejected_variant {
  std::string label;
  bool baseline = false;
  std::string why;  // "reason: evidence"
};

// What one case's run came to.
struct tuned_case {
  std::string case_name;
  std::int64_t size = 0;
  std::optional<tuned_entry> entry{};  // none where no variant of the candidate passed
  std::string label{};                 // the entry's variant
  std::string default_label{};         // the candidate's first configuration
  // Every configuration confirmed over all sessions, fastest first: the entry's rivals at its
  // own size, as (label, time [microseconds]).
  std::vector<std::pair<std::string, double>> confirmed{};
  std::string why{};  // where there is no entry
  // Each variant this run rejected, in the run's order: a rejected baseline leaves the entry
  // without an interval.
  std::vector<rejected_variant> rejected{};
  std::int64_t run_id = 0;
  std::string device{};  // the run's GPU, where the cases' runs may be of several (--from-runs)
};

struct tune_result {
  std::vector<tuned_case> cases;
  std::vector<tuned_table> tables;  // one per shape, in the order the cases first name it
  bool gpu = true;
  std::string gpu_unavailable;
  bench_report compiled{};  // without a GPU: the run that compiled every configuration
};

// A case's entry from its bench report: the fastest variant of the candidate that passed and
// was confirmed (not screened out), its time's 95% interval from its speedup's over the
// baseline's time, and the time of the candidate's first configuration in the same run.
tuned_case best_of(const bench_report& report, const std::string& case_name, std::int64_t size);

// The file name's pairs of the table a case belongs to: the task's integer symbols but the size,
// at the case's values, then the device, the dtype and the toolchain.
std::vector<std::pair<std::string, std::string>> table_key(const task_spec& task,
                                                           const task_case& c,
                                                           const std::string& size_symbol,
                                                           const bench_report& report);

tune_result run_tune(const tune_options& options, store& records);

// `tune --from-runs`: the tables that runs already in the store hold, measured as tune measures
// and not measured again. A completed run counts for its timed case where it timed every
// configuration of the candidate as its files are now (the same sources digest, no tuned table
// choosing one) over two sessions or more: a portfolio's case of a task with no table, or
// `bench --all-params --sessions N`. The newest such run of a case on each device and toolchain
// gives that case's entry in their table, as tune's own run would; a case with none says why.
// Needs no GPU.
tune_result tune_from_runs(const tune_options& options, store& records);

// `table` with the entries of the table of its name already in `folder` at the sizes it was not
// tuned at now, so that tuning some sizes again keeps the others; `kept` gets those sizes. A
// table there of another candidate is an input_error that names it.
tuned_table with_earlier_entries(const tuned_table& table, const std::filesystem::path& folder,
                                 std::vector<std::int64_t>& kept);

// The time, at one entry's size, of a configuration the table holds at other sizes.
struct rival_time {
  std::vector<std::int64_t> sizes{};  // the table's entries of this configuration
  std::string label{};                // as a label of the run
  std::optional<double> time_us{};    // none: rejected, or not timed past the first session
  std::string why{};                  // where there is no time: which of the two, and why
};

// `tune --check`: one table's entries measured again, each as tune measures it.
struct checked_entry {
  std::int64_t size = 0;
  std::string case_name{};  // the task's case at that size and the table's shape; empty: none
  // The table's configuration was the fastest confirmed one, or the fastest was not faster
  // beyond the run's noise (within_noise).
  bool still_best = false;
  bool within_noise = false;
  tuned_case now{};           // what this run found at that size
  std::string table_label{};  // the table's configuration as a label of this run, if it ran
  std::optional<double> table_time_us{};  // its time in this run
  bool table_screened = false;            // it was timed in the first session only
  // Where another configuration was the fastest: its speedup over the table's configuration,
  // sessions paired, with the 95% bootstrap interval; faster beyond noise where low > 1.
  std::optional<interval> best_over_table{};
  // The configurations of the table's other entries at this size, confirmed beside it.
  std::vector<rival_time> rivals{};
  std::string why{};  // where the entry was not measured
};

// Judges `entry` of `table` from a run at its size (case_name) that confirmed each of the
// table's configurations: whether it is still the best, and what the others took there.
checked_entry judge_entry(const bench_report& report, const tuned_table& table,
                          const tuned_entry& entry, const std::string& case_name);

struct check_result {
  std::vector<checked_entry> entries;
  // The table's device, dtype or toolchain where they differ from this machine's: its times
  // were not measured here.
  std::vector<std::string> mismatches;
  bool gpu = true;
  std::string gpu_unavailable;
  bench_report compiled{};  // without a GPU: the run that compiled every configuration
};

// Refuses (input_error naming `file`) a table that says it is of another task or candidate than
// options' (its "task" and "candidate"): its entries were not measured of this one. A table that
// names neither (an engine's) is taken.
void require_table_of(const tune_options& options, const tuned_table& table,
                      const std::filesystem::path& file);

// The task's first case of that size whose other symbols are the table's shape; empty: none. A
// symbol the table's name leaves out matches the task's default value of it.
std::string case_of(const task_spec& task, const tuned_table& table, const std::string& size_symbol,
                    std::int64_t size);

// Measures every entry of `table` again at its size (tune_options' cases are ignored), with
// every configuration of the table confirmed at each size, and says which are no longer the
// best: where another configuration was faster beyond the run's noise.
check_result check_tuned_table(const tune_options& options, const tuned_table& table,
                               store& records);

}  // namespace blaster
