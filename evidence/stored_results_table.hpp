#pragma once

#include <vector>

#include "evidence/metric.hpp"
#include "evidence/result_table.hpp"
#include "evidence/run_catalog.hpp"

namespace blaster {

// The metrics to show of recorded results: every definition some result has a value for, in the
// definitions' order; only the console's where `console` is set.
std::vector<metric_definition> shown_metrics(const std::vector<stored_result>& results,
                                             const std::vector<metric_definition>& definitions,
                                             bool console);

// Adds a column per metric to `table`, and to `row` the result's value of each (empty where it
// has none); a result that did not pass shows its reason instead, and its message under it.
void add_metric_columns(result_table& table, const std::vector<metric_definition>& metrics);
void add_result_cells(table_row& row, const stored_result& result,
                      const std::vector<metric_definition>& metrics);

// A run's recorded results as a table: candidate (the baseline starred), status, then the metrics.
result_table stored_results_table(const std::vector<stored_result>& results,
                                  const std::vector<metric_definition>& definitions,
                                  bool console);

}  // namespace blaster
