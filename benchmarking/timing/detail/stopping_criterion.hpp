#pragma once

#include <string>
#include <string_view>

namespace blaster {

// When to stop taking samples (nvbench's stopping_criterion_base): the timer feeds each sample
// and the time it spent, and asks whether to go on. A new rule is one new class overriding the
// protected hooks; callers only see the non-virtual interface, which keeps them rule-agnostic.
class stopping_criterion {
 public:
  virtual ~stopping_criterion() = default;

  // One sample, in whatever unit the caller times in (the rules here are scale-free).
  // Throws blaster::error for a sample that is negative or not finite: a timer bug.
  void add(double sample);
  // Wall time spent since the last call [seconds], including what the samples do not cover
  // (synchronization, clock checks), so that a budget bounds the real cost of measuring.
  void add_elapsed(double seconds);
  bool done() const { return is_done(); }
  // One line for a log or a report: why it stopped, or how far it is from stopping.
  std::string describe() const { return do_describe(); }

 protected:
  stopping_criterion() = default;
  stopping_criterion(const stopping_criterion&) = default;
  stopping_criterion& operator=(const stopping_criterion&) = default;

  virtual void do_add(double sample) = 0;
  // A rule without a time budget ignores the time.
  virtual void do_add_elapsed(double /*seconds*/) {}
  virtual bool is_done() const = 0;
  virtual std::string do_describe() const = 0;
};

enum class stop_reason {
  converged,    // enough samples, and their relative noise is within the bound
  budget,       // the time budget is spent
  max_samples,  // the sample cap is reached
  not_done,
};

std::string_view to_string(stop_reason reason);

// Stop once the samples are quiet enough (nvbench's stdrel criterion), or when measuring costs
// too much: at least min_samples with relative_noise <= max_noise, or budget_s spent, or
// max_samples taken. The budget stops even short of min_samples: it is the caller's hard limit.
struct relative_noise_rules {
  int min_samples = 10;
  double max_noise = 0.005;  // stddev / mean, 0.005 is 0.5%
  // [seconds] 1 s is about 1000 samples of hot mode's ~1 ms, plenty to reach 0.5% on a quiet
  // machine, and keeps a verdict within seconds on a noisy one.
  double budget_s = 1.0;
  int max_samples = 10000;
};

class relative_noise_criterion final : public stopping_criterion {
 public:
  // Throws input_error for min_samples < 2 (one sample has no noise to bound), max_samples
  // below min_samples, or a negative or non-finite max_noise, or a budget that is not positive.
  explicit relative_noise_criterion(const relative_noise_rules& rules = {});

  // The first rule that holds, in the order converged, max_samples, budget; not_done if none.
  stop_reason reason() const;
  // stddev / mean of the samples so far; 0 for fewer than 2.
  double noise() const;
  int samples() const { return count_; }
  double elapsed_s() const { return elapsed_s_; }  // [seconds]
  const relative_noise_rules& rules() const { return rules_; }

 protected:
  void do_add(double sample) override;
  void do_add_elapsed(double seconds) override;
  bool is_done() const override { return reason() != stop_reason::not_done; }
  std::string do_describe() const override;

 private:
  relative_noise_rules rules_;
  // Welford's running mean and sum of squared deviations: O(1) per sample, and no cancellation.
  int count_ = 0;
  double mean_ = 0.0;
  double squares_ = 0.0;
  double elapsed_s_ = 0.0;  // [seconds]
};

}  // namespace blaster
