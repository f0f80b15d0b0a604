#pragma once

// `bench --cases`: one bench run per timed case, and what each variant came to over all of them,
// a geometric mean of its speedups weighted by how often each size is served (task.json).

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarking/report/bench_report.hpp"

namespace blaster {

struct timed_case {
  std::string name;
  double weight = 1.0;
};

struct variant_over_cases {
  std::string label;
  std::vector<std::optional<double>> speedups;  // one per case, in the cases' order
  // The weighted geometric mean, where the variant passed on every case; else why not.
  std::optional<double> mean;
  std::string why;
};

// The baseline's and every candidate variant's speedup per case, from one report per case (in
// the same order), and their weighted geometric means. A variant missing from a case's report,
// or rejected there, has no mean.
std::vector<variant_over_cases> summarize_cases(const std::vector<timed_case>& cases,
                                                const std::vector<bench_report>& reports);

// exp(sum w_i ln x_i / sum w_i).
double weighted_geometric_mean(const std::vector<double>& values,
                               const std::vector<double>& weights);

nlohmann::json to_json(const std::vector<timed_case>& cases,
                       const std::vector<variant_over_cases>& summary);
// The summary as text lines: a header with each case and its weight, a line per variant.
std::vector<std::string> case_summary_lines(const std::vector<timed_case>& cases,
                                            const std::vector<variant_over_cases>& summary);

}  // namespace blaster
