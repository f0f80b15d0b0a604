#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "tasks/task_spec.hpp"

namespace blaster {

// What a float64 reference sees: the task, the case, every input as the exact values the
// device receives (after rounding to the buffer's type), and an output array per output buffer.
struct reference_context {
  const task_spec& task;
  const task_case& which;
  std::map<std::string, std::span<const double>, std::less<>> inputs;
  std::map<std::string, std::span<double>, std::less<>> outputs;
  // Per integer output, a second value each element may hold, NaN where there is none: a token
  // sampled where the random number lies within rounding of the boundary between two tokens
  // may be either. The gate fills these with NaN before the reference runs.
  std::map<std::string, std::span<double>, std::less<>> alternatives = {};

  [[nodiscard]] std::int64_t dim(std::string_view symbol) const;
  [[nodiscard]] double value(std::string_view symbol) const;
  [[nodiscard]] std::span<const double> input(std::string_view buffer) const;
  [[nodiscard]] std::span<double> output(std::string_view buffer) const;
  [[nodiscard]] std::span<double> alternative(std::string_view buffer) const;
};

// Computes every output in float64, on all cores.
using reference_fn = void (*)(const reference_context&);

// The reference a task.json names; an input_error lists the registered ones.
reference_fn find_reference(std::string_view name);

}  // namespace blaster
