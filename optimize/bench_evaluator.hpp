#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "benchmarking/bench_runner.hpp"
#include "optimize/optimize_loop.hpp"

namespace blaster {

// Judges each step as `blaster bench --candidate STEP.cu` does, with the options given (task,
// case, timing, sessions, counters): a run of its own in the store, whose id the step cites.
// The options' command is not used: each run records the bench command it stands for.
class bench_evaluator final : public step_evaluator {
 public:
  bench_evaluator(bench_options options, store& records)
      : options_(std::move(options)), records_(records) {}

  void evaluate(const std::filesystem::path& source_file, std::int64_t session,
                attempt& a) override;
  [[nodiscard]] nlohmann::json device() const override { return device_; }
  [[nodiscard]] std::string cannot_judge() const override { return cannot_judge_; }

 private:
  bench_options options_;
  store& records_;
  nlohmann::json device_ = nullptr;
  std::string cannot_judge_;
};

// What a bench report says about its one candidate, as the step's outcome: the fastest variant
// that passed, else the first rejection with its evidence (and the compile log where the source
// did not compile).
void fill_outcome(const bench_report& report, attempt& a);

}  // namespace blaster
