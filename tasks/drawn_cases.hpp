#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tasks/task_spec.hpp"

namespace blaster {

// Cases drawn from a task's symbol ranges, beside its fixed ones, so that no kernel passes by
// handling only the shapes someone chose. A run's seed gives the set; its cases are named
// "drawn:SEED:k" and rebuilt from that name alone.
//
// From one seed, in this order (duplicates dropped):
// - the smallest allowed case: every ranged symbol at its least value;
// - awkward sizes against every power-of-two block, for each symbol whose range reads no other
//   ranged symbol: 1, 31 and 33 (times the symbol's multiple), and values in the upper quarter
//   below a power of two P (3P/4 to P - 1, the sizes whose last block of P is mostly full; a
//   kernel that reads one block past a row fails there): below 1024 (the largest thread block),
//   below the largest power the range reaches, and below one more power of 64 or more drawn
//   from the seed. These pack into as few cases of at most drawn_case_bytes as hold them; the
//   symbols a case does not ask for are drawn log-uniformly within what still fits;
// - the largest allowed: each such symbol at its most (or the most that fits the task's
//   drawn.max_bytes), the others drawn as above within drawn_case_bytes or what the largest
//   already holds;
// - drawn_uniform_cases cases whose symbols are drawn uniformly, each within what fits
//   drawn_case_bytes given those drawn before it, in an order drawn from the seed.
// Symbols whose bounds read other ranged symbols (a block table's width, ceil_div(C, BS)) are
// drawn within what their bounds allow in each case.
//
// Cost: a symbol's cases hold at most drawn.max_bytes each and every other case at most
// drawn_case_bytes, so a set of n ranged symbols holds at most n * drawn.max_bytes +
// (cases - n) * 4 MiB, checked on three seeds. The set has at most 3 + 7 * n cases; core10's and
// the infer suite's tasks draw 9 to 13, of 10 to 60 MiB in all.
inline constexpr std::string_view drawn_case_prefix = "drawn:";
inline constexpr std::int64_t drawn_case_bytes = std::int64_t{4} << 20;
// Every drawn case's roofline flops are bounded too: few bytes can still be a long reference
// (decode attention re-reads a small cache over a long context). 2^30 flops take the float64
// reference about 0.1 s on 16 cores.
inline constexpr std::int64_t drawn_case_flops = std::int64_t{1} << 30;
inline constexpr std::size_t drawn_uniform_cases = 2;

// The drawn cases of `task` for `seed`; none where the task states no ranges. Depends on the
// task and the seed only, the same on every machine (its own integer generator, no floats).
std::vector<task_case> draw_cases(const task_spec& task, std::uint64_t seed);

// Appends the drawn cases of `seed` to task.cases (those not there yet), so that everything that
// walks a task's cases or finds one by name (task_spec::find_case) serves them as it serves the
// fixed ones: a run adds its seed's set where it loads the task, a worker the same from the seed
// it is given.
void add_drawn_cases(task_spec& task, std::uint64_t seed);

// Appends the cases `name` names (drawn_cases_named) to task.cases, those not there yet: a run
// that times "drawn:SEED:k", and a worker handed checks of drawn cases, rebuild them so.
void add_drawn_cases_named(task_spec& task, std::string_view name);

// "drawn:SEED:k".
std::string drawn_case_name(std::uint64_t seed, std::size_t index);

// Whether `name` names drawn cases ("drawn:..."); it may still be malformed.
bool is_drawn_case_name(std::string_view name);

// The cases "drawn:SEED" (the whole set) or "drawn:SEED:k" (its case k) name, rebuilt from the
// seed. An input_error where the name is malformed, the task draws no cases or k is past the set.
std::vector<task_case> drawn_cases_named(const task_spec& task, std::string_view name);

}  // namespace blaster
