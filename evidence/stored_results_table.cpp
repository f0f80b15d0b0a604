#include "evidence/stored_results_table.hpp"

#include <set>

namespace blaster {

std::vector<metric_definition> shown_metrics(const std::vector<stored_result>& results,
                                             const std::vector<metric_definition>& definitions,
                                             bool console) {
  std::set<std::string> present;
  for (const auto& r : results) {
    for (const auto& [tag, value] : r.metrics) present.insert(tag);
  }
  std::vector<metric_definition> out;
  for (const auto& d : definitions) {
    if (present.contains(d.tag) && (!console || d.console)) out.push_back(d);
  }
  return out;
}

void add_metric_columns(result_table& table, const std::vector<metric_definition>& metrics) {
  for (const auto& m : metrics) {
    table.columns.push_back({.metric = m,
                             .width = static_cast<int>(std::max<std::size_t>(m.name.size(), 8)),
                             .left = false});
  }
}

void add_result_cells(table_row& row, const stored_result& result,
                      const std::vector<metric_definition>& metrics) {
  for (const auto& m : metrics) {
    const bool measured = result.status == "passed" || result.status == "profiled";
    const auto v = measured ? result.metric(m.tag) : std::nullopt;
    if (v) {
      row.cells.emplace_back(*v);
    } else {
      row.cells.emplace_back();
    }
  }
  if (result.status != "passed" && result.status != "profiled") {
    row.summary = result.reason;
    if (!result.message.empty()) row.details.push_back(result.message);
  }
  if (!result.diagnosis.empty()) row.details.push_back("diagnosis: " + result.diagnosis);
}

result_table stored_results_table(const std::vector<stored_result>& results,
                                  const std::vector<metric_definition>& definitions, bool console) {
  result_table t;
  t.columns.push_back(
      {.metric = {.tag = "variant", .name = "candidate"}, .width = 9, .left = true});
  t.columns.push_back({.metric = {.tag = "status", .name = "status"}, .width = 8, .left = true});
  const std::vector<metric_definition> metrics = shown_metrics(results, definitions, console);
  add_metric_columns(t, metrics);
  for (const auto& r : results) {
    table_row row;
    row.cells.emplace_back(r.baseline ? r.label() + " *" : r.label());
    row.cells.emplace_back(r.status);
    add_result_cells(row, r, metrics);
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace blaster
