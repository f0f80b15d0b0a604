#include "tasks/input_saturation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "tasks/detail/symbol_ranges.hpp"

namespace blaster {
namespace {

// log(1 + e^z) without overflow.
double softplus(double z) { return z > 0 ? z + std::log1p(std::exp(-z)) : std::log1p(std::exp(z)); }

// The continued fraction of the incomplete beta function (Numerical Recipes' betacf, modified
// Lentz), for x below (a + 1) / (a + b + 2), where it converges fast.
double beta_fraction(double a, double b, double x) {
  constexpr double tiny = 1e-300;
  constexpr double eps = 1e-15;
  const double qab = a + b;
  const double qap = a + 1.0;
  const double qam = a - 1.0;
  double c = 1.0;
  double d = 1.0 - qab * x / qap;
  if (std::fabs(d) < tiny) d = tiny;
  d = 1.0 / d;
  double h = d;
  for (int m = 1; m <= 1000; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1.0 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1.0 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1.0 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1.0 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    const double step = d * c;
    h *= step;
    if (std::fabs(step - 1.0) < eps) break;
  }
  return h;
}

// The regularized incomplete beta I_x(a, b), given log x and log(1 - x): x near 1 (a tiny t)
// and near 0 (a huge one) both keep their digits.
double incomplete_beta(double a, double b, double log_x, double log_y) {
  const double x = std::exp(log_x);
  const double y = std::exp(log_y);
  if (x <= 0.0) return 0.0;
  if (y <= 0.0) return 1.0;
  const double front =
      std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * log_x + b * log_y);
  if (x < (a + 1.0) / (a + b + 2.0)) return front * beta_fraction(a, b, x) / a;
  return 1.0 - front * beta_fraction(b, a, y) / b;
}

// P(T > t) for Student's t with `dof` degrees of freedom: I_{dof/(dof+t^2)}(dof/2, 1/2) / 2,
// with u = t^2/dof in logs so that no t overflows.
double student_upper_tail(double t, double dof) {
  if (std::isnan(t)) return 0.0;
  if (t < 0.0) return 1.0 - student_upper_tail(-t, dof);
  if (t == 0.0) return 0.5;
  if (std::isinf(t)) return 0.0;
  const double log_u = 2.0 * std::log(t) - std::log(dof);
  const double log_x = -softplus(log_u);         // log(1 / (1 + u))
  const double log_y = log_u - softplus(log_u);  // log(u / (1 + u))
  return 0.5 * incomplete_beta(dof / 2.0, 0.5, log_x, log_y);
}

// P(X < low) + P(X > high) for X normal.
double normal_outside(double mean, double stddev, double low, double high) {
  if (stddev == 0.0) return mean < low || mean > high ? 1.0 : 0.0;
  const double scale = stddev * std::sqrt(2.0);
  return 0.5 * std::erfc((mean - low) / scale) + 0.5 * std::erfc((high - mean) / scale);
}

// The share of [low, high) outside [a, b]; halves, so that bounds near the largest double do
// not overflow their difference.
double uniform_outside(double low, double high, double a, double b) {
  const double width = 0.5 * high - 0.5 * low;
  const double below = 0.5 * std::clamp(a, low, high) - 0.5 * low;
  const double above = 0.5 * high - 0.5 * std::clamp(b, low, high);
  return std::clamp((below + above) / width, 0.0, 1.0);
}

// The share of the integers of [low, high] outside [a, b] (a, b integers).
double integers_outside(double low, double high, double a, double b) {
  const double count = high - low + 1.0;
  const double below = std::max(0.0, std::min(high, a - 1.0) - low + 1.0);
  const double above = std::max(0.0, high - std::max(low, b + 1.0) + 1.0);
  return std::clamp((below + above) / count, 0.0, 1.0);
}

std::string shown(const distribution& d) {
  if (d.kind == "normal") return fmt::format("normal(mean {:g}, std {:g})", d.mean, d.stddev);
  if (d.kind == "uniform") return fmt::format("uniform [{:g}, {:g})", d.low, d.high);
  if (d.kind == "heavy_tailed") {
    return fmt::format("heavy_tailed(dof {:g}, scale {:g})", d.dof, d.scale);
  }
  return fmt::format("{} [{:.0f}, {:.0f}]", d.kind, d.low, d.high);
}

}  // namespace

held_values held_by(dtype type) {
  switch (type) {
    case dtype::f16:
      return {-65504.0, 65504.0};
    case dtype::bf16:
      return {-3.3895313892515355e38, 3.3895313892515355e38};
    case dtype::f32:
      return {-static_cast<double>(std::numeric_limits<float>::max()),
              static_cast<double>(std::numeric_limits<float>::max())};
    case dtype::f64:
      return {std::numeric_limits<double>::lowest(), std::numeric_limits<double>::max()};
    case dtype::fp8_e4m3:
      return {-448.0, 448.0};
    case dtype::fp8_e5m2:
      return {-57344.0, 57344.0};
    case dtype::i8:
      return {-128.0, 127.0};
    case dtype::i32:
      return {-2147483648.0, 2147483647.0};
    case dtype::i64:
      return {-9223372036854775808.0, 9223372036854775807.0};
  }
  return {};
}

double saturated_fraction(dtype type, const distribution& d) {
  const held_values held = held_by(type);
  if (draws_integers(d)) {
    return integers_outside(d.low, d.high, std::ceil(held.low), std::floor(held.high));
  }
  // A continuous draw stored as an integer rounds to the nearest: half a step more either side.
  const double margin = is_floating(type) ? 0.0 : 0.5;
  const double low = held.low - margin;
  const double high = held.high + margin;
  if (d.kind == "normal") return normal_outside(d.mean, d.stddev, low, high);
  if (d.kind == "uniform") return uniform_outside(d.low, d.high, low, high);
  if (d.kind == "heavy_tailed") {
    // X = scale * T, T symmetric: P(X > high) + P(X < low).
    return student_upper_tail(high / d.scale, d.dof) + student_upper_tail(-low / d.scale, d.dof);
  }
  return 0.0;
}

std::vector<input_saturation> saturated_inputs(const task_spec& task, double at_least) {
  // The task's cases, then the ends of its ranges: bounds such as "V - 1" reach their widest at
  // the largest sizes. The largest ignore the memory cap: only distributions are evaluated.
  std::vector<std::pair<task_case, std::string>> cases;
  for (std::size_t i = 0; i < task.cases.size(); ++i) cases.emplace_back(task.cases[i], "");
  const auto order = detail::range_order(task);
  if (!order.empty()) {
    detail::wanted_values most;
    for (const symbol_spec* s : order) most[s->name] = std::numeric_limits<std::int64_t>::max();
    for (const auto& [wanted, name] :
         {std::pair{detail::wanted_values{}, "the smallest sizes the ranges allow"},
          std::pair{most, "the largest sizes the ranges allow"}}) {
      if (auto c = detail::realize(task, order, wanted)) {
        c->name = name;
        cases.emplace_back(std::move(*c), "drawn");
      }
    }
  }
  std::vector<input_saturation> found;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const task_case& c = cases[i].first;
    for (const auto& b : task.buffers) {
      if (!is_drawn(b.role)) continue;
      distribution d;
      try {
        d = task.input_distribution(b, c);
      } catch (const input_error&) {
        continue;  // bounds that do not evaluate are the case checks' to report
      }
      const double fraction = saturated_fraction(b.type, d);
      if (!(fraction >= at_least)) continue;
      const bool own = c.init.contains(b.name);
      const std::string where = own ? fmt::format("cases[{}].init.{}", i, b.name)
                                    : fmt::format("buffers.{}.init", b.name);
      // A buffer's own distribution repeats in every case: once is enough.
      const bool seen = std::any_of(found.begin(), found.end(), [&](const input_saturation& s) {
        return s.where == where && s.init.low == d.low && s.init.high == d.high;
      });
      if (seen) continue;
      found.push_back({.buffer = b.name,
                       .case_name = c.name,
                       .where = where,
                       .type = b.type,
                       .init = d,
                       .fraction = fraction});
    }
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const auto& a, const auto& b) { return a.fraction > b.fraction; });
  return found;
}

std::string describe(const input_saturation& s) {
  const held_values held = held_by(s.type);
  const bool clamps = !is_floating(s.type) || is_quantized(s.type);
  return fmt::format(
      "in case {}, {:.3g}% of the draws of {} for {} lie beyond what {} holds "
      "([{:g}, {:g}]) and {}",
      s.case_name, 100.0 * s.fraction, shown(s.init), s.buffer, name_of(s.type), held.low,
      held.high, clamps ? "are clipped to its ends" : "overflow to infinity (drawn again)");
}

std::string saturation_fix(const input_saturation& s) {
  const held_values held = held_by(s.type);
  if (draws_integers(s.init)) {
    return fmt::format("draw {} from integers that {} holds, or store it in a wider type", s.buffer,
                       name_of(s.type));
  }
  return fmt::format("scale {}'s distribution into [{:g}, {:g}], or store it in a wider type",
                     s.buffer, held.low, held.high);
}

std::vector<std::string> input_saturation_warnings(const task_spec& task) {
  std::vector<std::string> lines;
  for (const auto& s : saturated_inputs(task, saturation_warning_fraction)) {
    lines.push_back(
        fmt::format("task {}: {}: {}; {}", task.name, s.where, describe(s), saturation_fix(s)));
  }
  return lines;
}

}  // namespace blaster
