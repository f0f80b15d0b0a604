#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "benchmarking/runner/bench_runner.hpp"
#include "benchmarking/runner/warm_bench.hpp"
#include "optimize/optimize_loop.hpp"
#include "optimize/reward.hpp"

namespace blaster {

// Judges each step as `blaster bench --candidate STEP.cu` does, with the options given (task,
// case, timing, sessions, counters): a run of its own in the store, whose id the step cites.
// The options' command is not used: each run records the bench command it stands for. The runs
// form one warm series: the first prepares the worker, the device's ceilings, the gate's data and
// the baseline's gate, and every later step reuses them; a step whose candidate is rejected
// times nothing.
class bench_evaluator final : public step_evaluator {
 public:
  // Each step is timed in the sessions its reply asks for (else options.sessions), and in at
  // least `reward_sessions`, the first of which give its reward (reward.hpp).
  bench_evaluator(bench_options options, store& records,
                  int reward_sessions = default_reward_sessions)
      : options_(std::move(options)), records_(records), reward_sessions_(reward_sessions) {
    options_.time_lone_baseline = false;
    options_.profile_baseline = false;  // a step's diagnosis is its candidate's
    // A step's diagnosis needs the bound and the top stalls; the median of five counts is for
    // agreeing with Nsight Compute to a few percent.
    options_.counted_runs = 1;
  }

  void evaluate(const std::filesystem::path& source_file, std::int64_t session,
                attempt& a) override;
  // The step's judging run, where one with the command evaluate gives it (the same source, step,
  // session and sessions) completed in the store: its report is the step's outcome.
  bool recover(const std::filesystem::path& source_file, std::int64_t session, attempt& a) override;
  // A run of its own that times the baseline alone (with its counters, where the options ask
  // for them) and measures the device's ceilings, which every later step reuses.
  std::optional<baseline_timing> time_baseline(std::int64_t session) override;
  [[nodiscard]] nlohmann::json device() const override { return device_; }
  [[nodiscard]] std::string cannot_judge() const override { return cannot_judge_; }
  [[nodiscard]] int reward_sessions() const override { return reward_sessions_; }
  // How many worker processes the series has started: one, one more after each crash or timeout,
  // and one per kept_worker_evaluations evaluations.
  [[nodiscard]] int workers_started() const { return warm_.workers_started(); }

 private:
  // The options that judge one step: its candidate, its sessions, and the command its run
  // records ("... (step N of run R)"), by which recover finds that run again.
  [[nodiscard]] bench_options step_options(const std::filesystem::path& source_file,
                                           std::int64_t session, const attempt& a) const;
  // The step's outcome from its judging run's report.
  void take_outcome(const bench_report& report, const std::filesystem::path& source_file,
                    attempt& a);

  bench_options options_;
  store& records_;
  int reward_sessions_;
  warm_bench warm_{/*keep_worker=*/true};
  nlohmann::json device_ = nullptr;
  std::string cannot_judge_;
};

// What bounds variant `r`: its counters' bound where they were collected; else launch-bound
// where its time is within reach of the empty kernel's, bandwidth-bound where it moves its bytes
// at busy_unit_pct of the memory ceiling or more, compute-bound where its flops reach that
// share of the matrix rate; else unknown_bound. Empty where it was not timed.
std::string step_bound(const variant_result& r);

// What a run that timed the baseline alone (bench_options::baseline_only) found: its time where
// it passed, its bound, its counters' diagnosis, or why it has no time. `blaster verify` holds a
// session's record of its baseline to that run's report with this same function.
baseline_timing baseline_timing_of(const bench_report& report);

// What a bench report says about its one candidate, as the step's outcome: the fastest variant
// that passed, else the first rejection with its evidence (and the compile log where the source
// did not compile, with the line of `source` it blames). The speedup's interval is over every
// session the run timed; the reward is protocol_reward over its first `reward_sessions`.
// `blaster verify` recomputes a step from its judging run's report with this same function.
void fill_outcome(const bench_report& report, attempt& a, std::string_view source = {},
                  int reward_sessions = default_reward_sessions);

}  // namespace blaster
