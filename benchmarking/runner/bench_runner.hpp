#pragma once

// runner/: a bench run from its options to its report (bench_runner), its GPUs
// (gpu_choice, gpu_lanes), and what a series of runs keeps between them (warm_bench).

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "benchmarking/report/bench_report.hpp"
#include "benchmarking/runner/gpu_choice.hpp"
#include "benchmarking/timing/kernel_timer.hpp"
#include "core/compile_sandbox.hpp"

namespace blaster {

class store;
struct warm_bench;

struct bench_options {
  std::filesystem::path root;  // holds tasks/ and kernels/
  std::string task;
  // Files or folders of candidates; empty: kernels/<task>/. The task's init.cu, the baseline,
  // always comes first unless skip_baseline is set (for `blaster compile --candidate F`).
  std::vector<std::filesystem::path> candidates;
  bool skip_baseline = false;
  // The baseline alone, whatever `candidates` holds: what a loop times before its first step,
  // so that its first request already has the baseline's time and the device's ceilings.
  bool baseline_only = false;
  // A candidate with a tuned table for the device, dtype and the timed case's shape runs the
  // table's entry for the case's size only (kernels/<task>/tuned/); false: every configuration.
  bool use_tuned = true;
  // Only the candidates' configuration with exactly these params runs (`verify --remeasure`
  // judges again the one a bundle timed); the baseline runs whatever they say.
  std::optional<std::map<std::string, std::string>> only_params;
  std::string arch;                   // empty: the GPU's, or sm_90a without one
  std::optional<std::uint64_t> seed;  // none: drawn at run time
  timing_options timing;
  // false: the timed case's mode, else the task's, where they name one; else timing.mode
  bool mode_given = false;
  std::string timed_case;  // empty: the task's canonical case
  std::string command;     // as the user typed it, for the record
  // The blaster executable that runs each evaluation in a child process; empty: this one.
  std::filesystem::path worker_executable;
  // The compile sandbox's deadline and memory cap, and the limits on sources, launches and
  // params combinations (--compile-timeout, --compile-memory, --max-source-bytes, --max-launches,
  // --max-variants). Its executable, when empty, is worker_executable's.
  compile_limits compile;
  // Per evaluation (gate or timing); none: a few seconds beyond what the baseline needed.
  std::optional<std::chrono::milliseconds> deadline;
  // The GPUs it runs on (--gpus), one supervised worker on each: the gates and a screening
  // session are spread over them, and every session that a verdict compares runs on the first.
  // None given: this process's device 0.
  gpu_choice gpus;
  // Timing sessions: each a fresh process per variant, in alternating order.
  int sessions = 1;
  double cooldown_s = 1.0;  // [seconds] between two sessions
  // 0: every variant is timed in every session. N: after the first session only the baseline
  // and the N fastest candidates go on; the others are reported as screened out.
  int confirm_best = 0;
  // With confirm_best: the candidate's configurations (params) that go on whatever their first
  // session's time, beside the N fastest: `tune --check` times each entry of a table at every
  // other entry's size.
  std::vector<std::map<std::string, std::string>> always_confirm;
  // With confirm_best: the first session's sampling budget per variant [milliseconds], where it
  // is below the timing's own. Screening needs the order of the variants, not their last digit;
  // the sessions that confirm the fastest sample under the full budget. None: the full budget.
  std::optional<double> screen_budget_ms;
  // Runs the gate's small cases of every variant that passed it under compute-sanitizer's
  // memcheck, racecheck, initcheck and synccheck, where it is installed.
  bool sanitize = false;
  // Hardware counters of every variant that passed and was not screened out, in a worker of
  // their own after its timing (--profile); or instead of the timing (`blaster profile`). With ncu, Nsight Compute's report
  // of the same kernels too, where it is installed.
  bool profile = false;
  bool profile_only = false;
  // Compile every variant and record the run ("compiled"), looking for no GPU: what a shard of
  // a portfolio does on a machine without one (its CI, a cluster's CPU nodes).
  bool compile_only = false;
  // The baseline's counters too; a loop judging one candidate after another against the same
  // baseline has its diagnosis already and skips them.
  bool profile_baseline = true;
  bool ncu = false;
  int counted_runs = 5;  // counts of each variant's plan, their median (worker_request's)
  // Whether the baseline is timed when every candidate was rejected: a loop that judges one
  // candidate at a time needs no time for the baseline alone.
  bool time_lone_baseline = true;
};

// Compiles every candidate, checks each variant on every case against the float64 reference,
// times the survivors on the timed case, and records the run in the store. Problems with the
// task itself are input_errors; problems with a candidate are verdicts in its result.
// With `warm`, what an earlier run of the series prepared is used, and what this one prepares is
// kept for the next.
bench_report run_bench(const bench_options& options, store& records, warm_bench* warm = nullptr);

// The GPUs `choice` names among those this machine shows, as a worker of `executable` lists
// them. Throws cuda::gpu_unavailable where there is none, and an input_error, naming the GPUs
// that are there, for a choice of GPUs that are not or of two models.
std::vector<gpu_lane> choose_gpus(const gpu_choice& choice,
                                  const std::filesystem::path& executable);

// Only the compile stage of run_bench, for any architecture and with no GPU: what
// `blaster compile` shows. Nothing is recorded as a run.
bench_report compile_task(const bench_options& options, store& records);

}  // namespace blaster
