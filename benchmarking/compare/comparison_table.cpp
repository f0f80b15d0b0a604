#include "benchmarking/compare/comparison_table.hpp"

#include <cmath>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace blaster {
namespace {

constexpr metric_info task_column{
    .tag = "task", .name = "task", .unit = "", .description = "the task", .format = ""};
constexpr metric_info case_column{
    .tag = "case", .name = "case", .unit = "", .description = "the timed case", .format = ""};
constexpr metric_info variant_column{.tag = "variant",
                                     .name = "candidate",
                                     .unit = "",
                                     .description = "the variant's label",
                                     .format = ""};
constexpr metric_info a_time{.tag = "a_time_us",
                             .name = "A us",
                             .unit = "us",
                             .description = "A's time: the median of its session medians",
                             .format = "{:.2f}"};
constexpr metric_info b_time{.tag = "b_time_us",
                             .name = "B us",
                             .unit = "us",
                             .description = "B's time: the median of its session medians",
                             .format = "{:.2f}"};
constexpr metric_info ratio_column{.tag = "ratio",
                                   .name = "B/A",
                                   .unit = "x",
                                   .description = "B's time over A's: above 1 is slower",
                                   .format = "{:.3f}"};
constexpr metric_info low_column{.tag = "ratio_low",
                                 .name = "low",
                                 .unit = "x",
                                 .description = "the least ratio the two intervals allow",
                                 .format = "{:.3f}"};
constexpr metric_info high_column{.tag = "ratio_high",
                                  .name = "high",
                                  .unit = "x",
                                  .description = "the most ratio the two intervals allow",
                                  .format = "{:.3f}"};
constexpr metric_info status_column{
    .tag = "status",
    .name = "status",
    .unit = "",
    .description =
        "FAST, SLOW, SAME, INCONCLUSIVE, MISMATCH, ONLY_A, ONLY_B, REJECTED, FIXED "
        "or UNTIMED",
    .format = ""};
constexpr metric_info note_column{
    .tag = "note",
    .name = "note",
    .unit = "",
    .description = "what differs between the runs, or why nothing was compared",
    .format = ""};

table_cell number(const std::optional<double>& v) {
  if (!v || !std::isfinite(*v)) return std::monostate{};
  return *v;
}

std::string describe_side(std::string_view side, const std::vector<loaded_run>& runs) {
  std::set<std::string> gpus;
  for (const auto& run : runs) gpus.insert(run.report.device ? run.report.device->name : "none");
  if (runs.size() == 1) {
    const bench_report& r = runs.front().report;
    return fmt::format("{}: {}: task {}, case {} ({}, {}), GPU {}, {} mode, {} session{}", side,
                       runs.front().source, r.task, r.timed_case, r.timed_shape, r.dtype,
                       *gpus.begin(), to_string(r.timing.mode), r.sessions,
                       r.sessions == 1 ? "" : "s");
  }
  return fmt::format("{}: {} runs, {} to {}; GPU {}", side, runs.size(), runs.front().source,
                     runs.back().source, fmt::join(gpus, ", "));
}

constexpr comparison_status status_order[] = {
    comparison_status::slow,  comparison_status::rejected,     comparison_status::fast,
    comparison_status::same,  comparison_status::inconclusive, comparison_status::mismatch,
    comparison_status::fixed, comparison_status::untimed,      comparison_status::only_a,
    comparison_status::only_b};

}  // namespace

result_table comparison_table(const run_comparison& c, const std::vector<loaded_run>& a,
                              const std::vector<loaded_run>& b) {
  result_table t;
  t.title = "blaster compare";
  t.preamble = {describe_side("A", a), describe_side("B", b)};
  t.columns = {{metric_definition::of(task_column), 0, true},
               {metric_definition::of(case_column), 0, true},
               {metric_definition::of(variant_column), 0, true},
               {metric_definition::of(a_time), 9},
               {metric_definition::of(b_time), 9},
               {metric_definition::of(ratio_column), 6},
               {metric_definition::of(low_column), 6},
               {metric_definition::of(high_column), 6},
               {metric_definition::of(status_column), 12, true},
               {metric_definition::of(note_column), 0, true}};
  for (const auto& row : c.rows) {
    table_row r;
    r.cells = {row.task,
               row.case_name,
               row.variant,
               number(row.a_us),
               number(row.b_us),
               number(row.ratio ? std::optional(row.ratio->ratio) : std::nullopt),
               number(row.ratio ? std::optional(row.ratio->low) : std::nullopt),
               number(row.ratio ? std::optional(row.ratio->high) : std::nullopt),
               std::string(to_string(row.status)),
               row.note.empty() ? table_cell() : table_cell(row.note)};
    t.rows.push_back(std::move(r));
  }
  t.notes = c.notes;
  t.notes.push_back(fmt::format("{} tau = {:g}% (--threshold).", comparison_statistics,
                                100.0 * c.options.threshold));
  std::vector<std::string> counts;
  for (const comparison_status s : status_order) {
    if (const std::size_t n = c.count(s); n > 0) {
      counts.push_back(fmt::format("{} {}", n, to_string(s)));
    }
  }
  if (!counts.empty()) t.notes.push_back(fmt::format("{}", fmt::join(counts, ", ")));
  t.notes.push_back(c.regressed() ? fmt::format("REGRESSION: {} SLOW, {} REJECTED",
                                                c.count(comparison_status::slow),
                                                c.count(comparison_status::rejected))
                                  : std::string("no regression: nothing is SLOW or REJECTED"));
  return t;
}

}  // namespace blaster
