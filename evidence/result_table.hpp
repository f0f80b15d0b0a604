#pragma once

#include <string>
#include <variant>
#include <vector>

#include "evidence/metric.hpp"

namespace blaster {

// A cell: empty (shown as "-"), a number (shown by its column's format), or text.
using table_cell = std::variant<std::monostate, double, std::string>;

// A column owns its metric's text: a table outlives the definitions it was made from.
struct table_column {
  metric_definition metric;
  int width = 0;      // text tables: the least width
  bool left = false;  // text tables: aligned left (labels and words)
};

struct table_row {
  std::vector<table_cell> cells{};
  // Text tables show this after the table's first `summary_after` cells instead of the others:
  // a rejection's reason where there are no numbers. Other formats put it in the last column.
  std::string summary{};
  std::vector<std::string> details{};  // lines under the row: evidence, per-kernel times
};

// What a command prints as results: lines before the table, the table, notes after it. Every
// renderer (table_renderer) reads this and nothing else.
struct result_table {
  std::string title;
  std::vector<std::string> preamble;
  std::vector<table_column> columns;
  std::vector<table_row> rows;
  std::vector<std::string> notes;
  std::size_t summary_after = 2;
};

// The cell as its column shows it: "-" when empty.
std::string format_cell(const table_column& column, const table_cell& cell);

}  // namespace blaster
