#pragma once

#include <optional>
#include <span>

#include <nlohmann/json.hpp>

#include "benchmarking/report/bench_report.hpp"
#include "evidence/metric.hpp"

namespace blaster {

// A quantity of a variant's result: what it is, and how the model gives it. Defining one here is
// all it takes for it to appear in the bench table (where `console` asks for it), in Markdown,
// CSV and JSON, and in the store's metric rows.
struct variant_metric {
  metric_info info;
  std::optional<double> (*value)(const bench_report& report, const variant_result& result);
  int width = 8;         // the console table's column width
  bool console = false;  // a column of the console table
  bool counter = false;  // from the hardware counters: a column of the profile table
};

// Every metric of a variant, in the order of the tables' columns.
std::span<const variant_metric> variant_metrics();
const variant_metric* find_variant_metric(std::string_view tag);

// {tag: value} of every metric the result has a value for.
nlohmann::json metric_values(const bench_report& report, const variant_result& result);

}  // namespace blaster
