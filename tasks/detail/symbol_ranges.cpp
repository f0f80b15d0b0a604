#include "tasks/detail/symbol_ranges.hpp"

#include <algorithm>
#include <functional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "tasks/detail/case_checks.hpp"

namespace blaster::detail {
namespace {

std::int64_t floor_to(std::int64_t value, std::int64_t step) {
  const std::int64_t q = value / step;
  return (q * step > value ? q - 1 : q) * step;
}

std::int64_t ceil_to(std::int64_t value, std::int64_t step) {
  const std::int64_t down = floor_to(value, step);
  return down == value ? down : down + step;
}

}  // namespace

allowed_values allowed(const symbol_range& range, const symbol_table& symbols) {
  allowed_values a;
  a.min = range.min.evaluate(symbols);
  a.max = range.max.evaluate(symbols);
  a.step = range.multiple ? range.multiple->evaluate(symbols) : 1;
  if (a.step < 1) {
    BLASTER_INPUT_ERROR("its multiple \"{}\" is {}, not a positive integer", range.multiple->text(),
                        a.step);
  }
  // A size is never negative, whatever a bound's expression gives.
  a.low = ceil_to(std::max<std::int64_t>(a.min, 0), a.step);
  a.high = floor_to(a.max, a.step);
  return a;
}

std::vector<std::string> ranged_reads(const task_spec& task, const symbol_range& range) {
  std::set<std::string> reads;
  auto add = [&](const expression& e) {
    for (const auto& name : e.symbols()) {
      const symbol_spec* s = task.find_symbol(name);
      if (s != nullptr && s->range) reads.insert(name);
    }
  };
  add(range.min);
  add(range.max);
  if (range.multiple) add(*range.multiple);
  return {reads.begin(), reads.end()};
}

std::vector<const symbol_spec*> range_order(const task_spec& task, std::string* cycle) {
  // Depth-first, in declaration order: a symbol is placed once everything it reads is.
  std::vector<const symbol_spec*> order;
  std::map<std::string, int, std::less<>> state;  // 1: being placed, 2: placed
  std::vector<std::string> path;
  std::function<bool(const symbol_spec&)> place = [&](const symbol_spec& s) {
    if (state[s.name] == 2) return true;
    if (state[s.name] == 1) {
      const auto from = std::find(path.begin(), path.end(), s.name);
      std::vector<std::string> ring(from, path.end());
      ring.push_back(s.name);
      if (cycle != nullptr) *cycle = fmt::format("{}", fmt::join(ring, " -> "));
      return false;
    }
    state[s.name] = 1;
    path.push_back(s.name);
    for (const auto& name : ranged_reads(task, *s.range)) {
      if (!place(*task.find_symbol(name))) return false;
    }
    path.pop_back();
    state[s.name] = 2;
    order.push_back(&s);
    return true;
  };
  for (const auto& s : task.symbols) {
    if (s.range && !place(s)) return {};
  }
  return order;
}

std::optional<task_case> realize(const task_spec& task,
                                 const std::vector<const symbol_spec*>& order,
                                 const wanted_values& wanted, std::string* why) {
  symbol_table table;
  for (const auto& s : task.symbols) {
    if (!is_floating(s.type) && s.value) table[s.name] = static_cast<std::int64_t>(*s.value);
  }
  task_case c;
  for (const symbol_spec* s : order) {
    allowed_values a;
    try {
      a = allowed(*s->range, table);
    } catch (const input_error& e) {
      if (why != nullptr) *why = fmt::format("the range of {}: {}", s->name, e.what());
      return std::nullopt;
    }
    if (a.low > a.high) {
      if (why != nullptr) {
        *why = fmt::format("the range of {} allows no value: no multiple of {} lies in [{}, {}]",
                           s->name, a.step, a.min, a.max);
      }
      return std::nullopt;
    }
    std::int64_t v = a.low;
    if (const auto it = wanted.find(s->name); it != wanted.end()) {
      v = std::clamp(floor_to(it->second, a.step), a.low, a.high);
    }
    table[s->name] = v;
    c.values[s->name] = static_cast<double>(v);
  }
  return c;
}

std::int64_t case_bytes(const task_spec& task, const task_case& c) {
  std::int64_t total = 0;
  for (const auto& b : task.buffers) {
    if (__builtin_add_overflow(total, task.buffer_bytes(b, c), &total)) {
      BLASTER_INPUT_ERROR("task {}: the buffers of case {} hold more bytes than an int64 holds",
                          task.name, task.describe(c));
    }
  }
  return total;
}

std::optional<std::string> drawn_case_problem(const task_spec& task, const task_case& c,
                                              std::int64_t max_bytes, std::int64_t max_flops) {
  try {
    for (const auto& b : task.buffers) {
      // A buffer of no elements is an allocation of none: no case checks that, so none is drawn.
      if (task.elements(b, c) == 0) return fmt::format("buffer {} has no elements", b.name);
    }
    const std::int64_t bytes = case_bytes(task, c);
    if (bytes > max_bytes) {
      return fmt::format("its buffers hold {} bytes, over the {} allowed", bytes, max_bytes);
    }
    const symbol_table symbols = task.integer_symbols(c);
    static_cast<void>(task.bytes.evaluate(symbols));
    if (const std::int64_t flops = task.flops.evaluate(symbols); flops > max_flops) {
      return fmt::format("its roofline counts {} flops, over the {} allowed", flops, max_flops);
    }
    for (const auto& b : task.buffers) {
      if (!is_drawn(b.role)) continue;
      const distribution d = task.input_distribution(b, c);
      if (const auto problem = integer_draw_problem(task, b, c, d)) {
        return fmt::format("{}: {}", b.name, *problem);
      }
    }
  } catch (const input_error& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

}  // namespace blaster::detail
