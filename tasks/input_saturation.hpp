#pragma once

#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {

// Inputs a task can really hold. A draw beyond what its buffer's type holds is not the value the
// task meant: i8 and the fp8 formats saturate it to their ends (an i8 input drawn from
// [-1000, 1000] is -128 or 127 in 87% of elements), and f16, bf16 and f32 overflow to infinity,
// which the input generator redraws, so the distribution is cut off there. A case whose inputs
// are mostly their type's ends proves little, so the task checks warn where a noticeable
// fraction clips and load_task refuses the task where most draws do.

// The fraction of draws from d that type cannot hold: beyond its largest finite value (floats),
// outside its integers after rounding (i8, i32, i64). Worked out from the parameters: normal and
// uniform exactly, heavy_tailed through Student's t distribution function, int_range and
// distinct by counting. d's bounds must be evaluated (task_spec::input_distribution).
double saturated_fraction(dtype type, const distribution& d);

// [low, high]: the finite values of a float type, the integers of an integer type.
struct held_values {
  double low = 0.0;
  double high = 0.0;
};
held_values held_by(dtype type);

// Fractions at or above these warn, and above the second load_task refuses.
inline constexpr double saturation_warning_fraction = 1e-3;
inline constexpr double saturation_refusal_fraction = 0.5;

// One input of one case whose type cannot hold a fraction of its draws.
struct input_saturation {
  std::string buffer;
  std::string case_name;  // a case of the task, or the smallest or largest sizes its ranges allow
  std::string where;      // the distribution's JSON path: buffers.x.init or cases[2].init.x
  dtype type = dtype::f32;
  distribution init;  // its bounds evaluated in that case
  double fraction = 0.0;
};

// Every input of every case, and of the smallest and the largest sizes the ranges allow (the
// drawn cases lie between), whose draws clip in at least `at_least`; one entry per distribution
// (its first case), the largest fraction first.
std::vector<input_saturation> saturated_inputs(const task_spec& task, double at_least);

// "in case canonical, 12% of the draws of normal(mean 0, std 3e+04) for x lie beyond what f16
// holds ([-65504, 65504]) and overflow to infinity (drawn again)".
std::string describe(const input_saturation& s);
// What to change: "scale x's distribution into [-65504, 65504], or store it in a wider type".
std::string saturation_fix(const input_saturation& s);

// A line per input that clips in at least saturation_warning_fraction of its draws: the task
// design warnings, beside the gate's warnings about near-constant outputs.
std::vector<std::string> input_saturation_warnings(const task_spec& task);

}  // namespace blaster
