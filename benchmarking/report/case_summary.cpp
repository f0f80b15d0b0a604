#include "benchmarking/report/case_summary.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"

namespace blaster {

double weighted_geometric_mean(const std::vector<double>& values,
                               const std::vector<double>& weights) {
  if (values.empty() || values.size() != weights.size()) {
    BLASTER_INPUT_ERROR("a weighted mean needs one weight per value: {} values, {} weights",
                        values.size(), weights.size());
  }
  double log_sum = 0.0;
  double weight_sum = 0.0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!(values[i] > 0.0) || !(weights[i] > 0.0)) {
      BLASTER_INPUT_ERROR("a geometric mean needs positive values and weights: value {}, weight {}",
                          values[i], weights[i]);
    }
    log_sum += weights[i] * std::log(values[i]);
    weight_sum += weights[i];
  }
  return std::exp(log_sum / weight_sum);
}

std::vector<variant_over_cases> summarize_cases(const std::vector<timed_case>& cases,
                                                const std::vector<bench_report>& reports) {
  if (cases.size() != reports.size()) {
    BLASTER_THROW("{} cases and {} reports: one report per case", cases.size(), reports.size());
  }
  std::vector<variant_over_cases> out;
  auto row_of = [&](const std::string& label) -> variant_over_cases& {
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const variant_over_cases& v) { return v.label == label; });
    if (it != out.end()) return *it;
    out.push_back({.label = label,
                   .speedups = std::vector<std::optional<double>>(cases.size()),
                   .mean = std::nullopt,
                   .why = ""});
    return out.back();
  };
  for (std::size_t k = 0; k < reports.size(); ++k) {
    for (const variant_result& r : reports[k].results) {
      // A tuned candidate runs another configuration at each size: one row for all of them.
      variant_over_cases& row = row_of(r.tuned ? r.candidate + " (tuned)" : r.label);
      if (r.status == "passed" && r.speedup) {
        row.speedups[k] = r.speedup;
      } else if (row.why.empty()) {
        row.why =
            fmt::format("{} on {}", r.status == "passed" ? "no speedup" : r.status, cases[k].name);
        if (r.reason != reason_code::none) row.why += fmt::format(" ({})", to_string(r.reason));
      }
    }
  }
  for (variant_over_cases& row : out) {
    std::vector<double> values;
    std::vector<double> weights;
    for (std::size_t k = 0; k < cases.size(); ++k) {
      if (!row.speedups[k]) {
        if (row.why.empty()) row.why = fmt::format("not in the run of {}", cases[k].name);
        continue;
      }
      values.push_back(*row.speedups[k]);
      weights.push_back(cases[k].weight);
    }
    if (values.size() == cases.size()) row.mean = weighted_geometric_mean(values, weights);
  }
  return out;
}

nlohmann::json to_json(const std::vector<timed_case>& cases,
                       const std::vector<variant_over_cases>& summary) {
  nlohmann::json j = {{"cases", nlohmann::json::array()}, {"variants", nlohmann::json::array()}};
  for (const auto& c : cases) j["cases"].push_back({{"case", c.name}, {"weight", c.weight}});
  for (const auto& v : summary) {
    nlohmann::json speedups = nlohmann::json::array();
    for (const auto& s : v.speedups) speedups.push_back(s ? nlohmann::json(*s) : nullptr);
    j["variants"].push_back(
        {{"variant", v.label},
         {"speedups", speedups},
         {"weighted_geometric_mean", v.mean ? nlohmann::json(*v.mean) : nullptr},
         {"why", v.why}});
  }
  return j;
}

std::vector<std::string> case_summary_lines(const std::vector<timed_case>& cases,
                                            const std::vector<variant_over_cases>& summary) {
  std::size_t label_width = 8;
  for (const auto& v : summary) label_width = std::max(label_width, v.label.size());
  std::string header = fmt::format("{:<{}}", "variant", label_width);
  for (const auto& c : cases) {
    header += fmt::format("  {:>10}",
                          c.weight == 1.0 ? c.name : fmt::format("{} x{:g}", c.name, c.weight));
  }
  header += "  weighted mean";
  std::vector<std::string> lines = {
      "speedup over the baseline per timed case (x weight, from task.json), and the weighted "
      "geometric mean over them:",
      header};
  for (const auto& v : summary) {
    std::string line = fmt::format("{:<{}}", v.label, label_width);
    for (const auto& s : v.speedups) {
      line += fmt::format("  {:>10}", s ? fmt::format("{:.2f}x", *s) : std::string("-"));
    }
    line += v.mean ? fmt::format("  {:.3f}x", *v.mean) : fmt::format("  - ({})", v.why);
    lines.push_back(line);
  }
  return lines;
}

}  // namespace blaster
