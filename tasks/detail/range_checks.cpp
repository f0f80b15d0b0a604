#include "tasks/detail/range_checks.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"
#include "tasks/detail/symbol_ranges.hpp"
#include "tasks/drawn_cases.hpp"

namespace blaster::detail {
namespace {

// Each bound reads integer symbols of the task only: a float (eps) has no place in a size.
void check_reads(const task_spec& task, const symbol_spec& s, const json_reader& r) {
  auto check = [&](const expression& e, const char* key) {
    for (const auto& name : e.symbols()) {
      const symbol_spec* read = task.find_symbol(name);
      if (read == nullptr || is_floating(read->type)) {
        r.fail(fmt::format("symbols.{}.range.{}", s.name, key),
               fmt::format("\"{}\" reads {}, which is not an integer symbol of the task; a bound "
                           "reads sizes only",
                           e.text(), name));
      }
      if (read->name == s.name) {
        r.fail(fmt::format("symbols.{}.range.{}", s.name, key),
               fmt::format("\"{}\" reads {} itself; a bound reads other symbols", e.text(), name));
      }
    }
  };
  check(s.range->min, "min");
  check(s.range->max, "max");
  if (s.range->multiple) check(*s.range->multiple, "multiple");
}

// Every case's value of a ranged symbol lies in its range, evaluated in that case: the ranges
// state the sizes the task can take, and a case someone chose is one of them.
void check_cases_within(const task_spec& task, const json_reader& r) {
  for (const auto& c : task.cases) {
    const symbol_table symbols = task.integer_symbols(c);
    for (const auto& s : task.symbols) {
      if (!s.range) continue;
      const std::string where = fmt::format("symbols.{}.range", s.name);
      allowed_values a;
      try {
        a = allowed(*s.range, symbols);
      } catch (const input_error& e) {
        r.fail(where, fmt::format("in case {}: {}", c.name, e.what()));
      }
      const std::int64_t v = symbols.at(s.name);
      if (v < a.min || v > a.max || v % a.step != 0) {
        r.fail(where, fmt::format("case {} has {} = {}, outside the range ([{}, {}]{}); widen the "
                                  "range so that it holds every case, or change the case",
                                  c.name, s.name, v, a.min, a.max,
                                  a.step == 1 ? "" : fmt::format(", multiples of {}", a.step)));
      }
    }
  }
}

}  // namespace

void check_ranges(const task_spec& task, const json_reader& r) {
  const bool ranged =
      std::any_of(task.symbols.begin(), task.symbols.end(), [](const auto& s) { return s.range; });
  if (!ranged && task.drawn_max_bytes == 0) return;
  if (!ranged) {
    r.fail("drawn",
           "no symbol has a \"range\", so no case is drawn; give the size symbols ranges, e.g. "
           "\"range\": {\"min\": 1, \"max\": 16384}, or remove \"drawn\"");
  }
  if (task.drawn_max_bytes == 0) {
    r.fail("task",
           "missing \"drawn\": a task whose symbols have ranges states \"drawn\": {\"max_bytes\": "
           "N}, the most bytes the buffers of one drawn case may hold (each is checked on every "
           "run, on three seeds)");
  }
  if (task.drawn_max_bytes > max_checked_case_bytes) {
    r.fail("drawn.max_bytes",
           fmt::format("{} is over the {} GiB that a case checked on every run may hold; lower it",
                       task.drawn_max_bytes, max_checked_case_bytes >> 30));
  }
  for (const auto& s : task.symbols) {
    if (is_floating(s.type)) continue;
    if (!s.range && !s.value) {
      r.fail(fmt::format("symbols.{}", s.name),
             "has neither a default \"value\" nor a \"range\", so a drawn case cannot give it a "
             "value; add a range (a size the task can take) or a default (a size it fixes)");
    }
    if (s.range) check_reads(task, s, r);
  }
  std::string cycle;
  const auto order = range_order(task, &cycle);
  if (order.empty()) {
    r.fail(fmt::format("symbols.{}.range", cycle.substr(0, cycle.find(' '))),
           fmt::format("the bounds read each other in a ring ({}), so none can be drawn first; "
                       "let one of them read fixed symbols only",
                       cycle));
  }
  check_cases_within(task, r);
  // The smallest allowed case is drawn on every run: it must exist and fit.
  std::string why;
  const auto smallest = realize(task, order, {}, &why);
  if (!smallest) r.fail("symbols", fmt::format("the smallest allowed case: {}", why));
  if (const auto problem =
          drawn_case_problem(task, *smallest, task.drawn_max_bytes, drawn_case_flops)) {
    bool over = false;
    try {
      over = case_bytes(task, *smallest) > task.drawn_max_bytes;
    } catch (const input_error&) {
      over = true;
    }
    r.fail(over ? "drawn.max_bytes" : "symbols",
           fmt::format("the smallest allowed case ({}) cannot be drawn: {}; raise the least "
                       "values of the ranges{}",
                       task.describe(*smallest), *problem, over ? " or max_bytes" : ""));
  }
}

}  // namespace blaster::detail
