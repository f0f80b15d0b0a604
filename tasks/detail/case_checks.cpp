#include "tasks/detail/case_checks.hpp"

#include <limits>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"
#include "tasks/input_saturation.hpp"

namespace blaster::detail {

std::optional<std::string> integer_draw_problem(const task_spec& task, const buffer_spec& b,
                                                const task_case& c, const distribution& d) {
  if (!draws_integers(d)) return std::nullopt;
  if (d.low > d.high) return fmt::format("\"low\" is {}, above \"high\" {}", d.low, d.high);
  const double held = d.high - d.low + 1;
  if (d.kind == "distinct" && held < static_cast<double>(task.elements(b, c))) {
    return fmt::format("{} distinct values do not fit in [{}, {}]", task.elements(b, c), d.low,
                       d.high);
  }
  if (d.kind == "distinct_rows" && held < static_cast<double>(d.row)) {
    return fmt::format("rows of {} distinct values do not fit in [{}, {}]", d.row, d.low, d.high);
  }
  return std::nullopt;
}

void check_cases(const task_spec& task, const json_reader& r) {
  for (std::size_t index = 0; index < task.cases.size(); ++index) {
    const task_case& c = task.cases[index];
    const symbol_table symbols = task.integer_symbols(c);
    auto check = [&](const expression& e, const std::string& where) {
      try {
        static_cast<void>(e.evaluate(symbols));
      } catch (const input_error& error) {
        r.fail(where, fmt::format("in case {}: {}", c.name, error.what()));
      }
    };
    std::int64_t case_bytes = 0;
    for (const auto& b : task.buffers) {
      for (std::size_t i = 0; i < b.shape.size(); ++i) {
        check(b.shape[i], fmt::format("buffers.{}.shape[{}]", b.name, i));
      }
      try {
        if (__builtin_add_overflow(case_bytes, task.buffer_bytes(b, c), &case_bytes)) {
          case_bytes = std::numeric_limits<std::int64_t>::max();
        }
      } catch (const input_error& error) {
        r.fail(fmt::format("buffers.{}.shape", b.name), error.what());
      }
    }
    // Sizes are bounded here, before anything is drawn or allocated, GPU or not.
    if (case_bytes > max_case_bytes) {
      r.fail(fmt::format("cases.{}", c.name),
             fmt::format("its buffers hold {} bytes, over the limit of {} GiB; shrink the case",
                         case_bytes, max_case_bytes >> 30));
    }
    if (!c.large && case_bytes > max_checked_case_bytes) {
      r.fail(fmt::format("cases.{}", c.name),
             fmt::format("its buffers hold {} bytes, over the {} GiB that a case checked on every "
                         "run may hold; mark it \"large\": true (checked only when timed) or "
                         "shrink it",
                         case_bytes, max_checked_case_bytes >> 30));
    }
    if (task.read_bytes) {
      check(*task.read_bytes, "roofline.read_bytes");
      check(*task.write_bytes, "roofline.write_bytes");
    }
    check(task.bytes, "roofline.bytes");
    check(task.flops, "roofline.flops");
    for (const auto& b : task.buffers) {
      if (!is_drawn(b.role)) continue;
      const std::string where = c.init.contains(b.name)
                                    ? fmt::format("cases[{}].init.{}", index, b.name)
                                    : fmt::format("buffers.{}.init", b.name);
      distribution d;
      try {
        d = task.input_distribution(b, c);
      } catch (const input_error& error) {
        r.fail(where, fmt::format("in case {}: {}", c.name, error.what()));
      }
      if (const auto problem = integer_draw_problem(task, b, c, d)) {
        r.fail(where, fmt::format("in case {} ({}): {}", c.name, task.describe(c), *problem));
      }
    }
  }
}

void refuse_saturated_inputs(const task_spec& task, const json_reader& r) {
  const auto found = saturated_inputs(task, saturation_refusal_fraction);
  if (found.empty()) return;
  const input_saturation& s = found.front();
  r.fail(s.where, fmt::format("{}: more than half, so the case would test the type's ends rather "
                              "than the task; {}",
                              describe(s), saturation_fix(s)));
}

}  // namespace blaster::detail
