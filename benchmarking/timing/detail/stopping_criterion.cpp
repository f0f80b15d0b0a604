#include "benchmarking/timing/detail/stopping_criterion.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/error.hpp"

namespace blaster {

void stopping_criterion::add(double sample) {
  if (!std::isfinite(sample) || sample < 0.0) {
    BLASTER_THROW("stopping_criterion::add: sample {} is not a finite, non-negative time", sample);
  }
  do_add(sample);
}

void stopping_criterion::add_elapsed(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0.0) {
    BLASTER_THROW("stopping_criterion::add_elapsed: {} s is not a finite, non-negative time",
                  seconds);
  }
  do_add_elapsed(seconds);
}

std::string_view to_string(stop_reason reason) {
  switch (reason) {
    case stop_reason::converged:
      return "converged";
    case stop_reason::budget:
      return "budget";
    case stop_reason::max_samples:
      return "max_samples";
    case stop_reason::not_done:
      return "not_done";
  }
  return "unknown";
}

relative_noise_criterion::relative_noise_criterion(const relative_noise_rules& rules)
    : rules_(rules) {
  if (rules.min_samples < 2) {
    BLASTER_INPUT_ERROR("min_samples is {}; the noise of fewer than 2 samples means nothing",
                        rules.min_samples);
  }
  if (rules.max_samples < rules.min_samples) {
    BLASTER_INPUT_ERROR("max_samples {} is below min_samples {}", rules.max_samples,
                        rules.min_samples);
  }
  if (!std::isfinite(rules.max_noise) || rules.max_noise < 0.0) {
    BLASTER_INPUT_ERROR("max_noise {} must be a finite fraction, 0 or more (0.005 is 0.5%)",
                        rules.max_noise);
  }
  if (!(rules.budget_s > 0.0)) {
    BLASTER_INPUT_ERROR("the time budget {} s must be positive", rules.budget_s);
  }
}

void relative_noise_criterion::do_add(double sample) {
  ++count_;
  const double delta = sample - mean_;
  mean_ += delta / static_cast<double>(count_);
  squares_ += delta * (sample - mean_);
}

void relative_noise_criterion::do_add_elapsed(double seconds) { elapsed_s_ += seconds; }

double relative_noise_criterion::noise() const {
  if (count_ < 2) return 0.0;
  const double deviation = std::sqrt(squares_ / static_cast<double>(count_ - 1));
  if (mean_ == 0.0) return deviation == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
  return deviation / mean_;
}

stop_reason relative_noise_criterion::reason() const {
  if (count_ >= rules_.min_samples && noise() <= rules_.max_noise) return stop_reason::converged;
  if (count_ >= rules_.max_samples) return stop_reason::max_samples;
  if (elapsed_s_ >= rules_.budget_s) return stop_reason::budget;
  return stop_reason::not_done;
}

std::string relative_noise_criterion::do_describe() const {
  const double noise_pct = noise() * 100.0;
  const double bound_pct = rules_.max_noise * 100.0;
  switch (reason()) {
    case stop_reason::converged:
      return fmt::format("converged: relative noise {:.3f}% <= {:.3f}% after {} samples", noise_pct,
                         bound_pct, count_);
    case stop_reason::max_samples:
      return fmt::format(
          "stopped at max_samples: {} samples taken, relative noise {:.3f}% above the {:.3f}% "
          "bound",
          count_, noise_pct, bound_pct);
    case stop_reason::budget:
      return fmt::format(
          "stopped on budget: {:.3f} s of {:.3f} s spent, {} samples, relative noise {:.3f}% "
          "(bound {:.3f}%)",
          elapsed_s_, rules_.budget_s, count_, noise_pct, bound_pct);
    case stop_reason::not_done:
      break;
  }
  return fmt::format(
      "not done: {} samples (at least {}), relative noise {:.3f}% (bound {:.3f}%), {:.3f} s of "
      "{:.3f} s spent",
      count_, rules_.min_samples, noise_pct, bound_pct, elapsed_s_, rules_.budget_s);
}

}  // namespace blaster
