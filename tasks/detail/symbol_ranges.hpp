#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tasks/task_spec.hpp"

namespace blaster::detail {

// The values of a symbol of the range's, given the symbols it reads: multiples of `step` in
// [low, high]. `min` and `max` are the bounds as stated; low and high those rounded inwards to
// multiples, so low > high where no multiple lies between the bounds.
struct allowed_values {
  std::int64_t min = 0;
  std::int64_t max = 0;
  std::int64_t step = 1;
  std::int64_t low = 0;
  std::int64_t high = 0;
};

// Evaluates the range's bounds with `symbols`; an input_error where one does not evaluate, or
// where the multiple is not positive.
allowed_values allowed(const symbol_range& range, const symbol_table& symbols);

// The symbols a range reads that have ranges of their own, sorted: those must be drawn first.
std::vector<std::string> ranged_reads(const task_spec& task, const symbol_range& range);

// The ranged symbols, each after every ranged symbol its bounds read (declaration order
// otherwise); empty with `cycle` set ("A -> B -> A") where bounds read each other in a ring.
std::vector<const symbol_spec*> range_order(const task_spec& task, std::string* cycle = nullptr);

// Symbol -> the value a drawn case asks for; the rest take their least allowed value.
using wanted_values = std::map<std::string, std::int64_t, std::less<>>;

// The case whose ranged symbols take `wanted` values, each moved into what its range allows
// given the symbols before it (clamped, then rounded down to a multiple), and the least allowed
// value where not given; symbols without a range keep their default. nullopt with `why` set where
// a range allows no value or a bound fails to evaluate.
std::optional<task_case> realize(const task_spec& task,
                                 const std::vector<const symbol_spec*>& order,
                                 const wanted_values& wanted, std::string* why = nullptr);

// Why case c cannot be checked as a drawn case: a shape or roofline expression that does not
// evaluate, a buffer of no elements, buffers over `max_bytes` in all, a roofline count of more
// than `max_flops` (the float64 reference does that work on the host, three seeds over), an
// integer draw that cannot be made (integer_draw_problem). nullopt where it can be.
std::optional<std::string> drawn_case_problem(const task_spec& task, const task_case& c,
                                              std::int64_t max_bytes, std::int64_t max_flops);

// The bytes of every buffer of case c; an input_error where a size overflows.
std::int64_t case_bytes(const task_spec& task, const task_case& c);

}  // namespace blaster::detail
