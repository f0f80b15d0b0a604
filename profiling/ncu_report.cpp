#include "profiling/ncu_report.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "profiling/counters.hpp"

namespace blaster {
namespace {

// ncu prints a ratio to two decimals, too coarse for a stall reason that holds 1% of the stalls.
// Each stall ratio is also asked for as the two counts it is the quotient of, which ncu prints
// whole: the warps stalled for the reason, summed over cycles, and the cycles that issued.
constexpr std::string_view issue_active = "smsp__issue_active.sum";

std::optional<std::string> stalled_count(std::string_view metric) {
  if (!metric.starts_with(counter::stall_prefix) || !metric.ends_with(counter::stall_suffix)) {
    return std::nullopt;
  }
  metric.remove_prefix(counter::stall_prefix.size());
  metric.remove_suffix(counter::stall_suffix.size());
  return fmt::format("smsp__warps_issue_stalled_{}.sum", metric);
}

// `metrics` and the counts that give its stall ratios exactly.
std::vector<std::string> with_exact_ratios(const std::vector<std::string>& metrics) {
  std::vector<std::string> out = metrics;
  for (const auto& m : metrics) {
    if (auto count = stalled_count(m)) out.push_back(std::move(*count));
  }
  if (out.size() > metrics.size()) out.emplace_back(issue_active);
  return out;
}

std::string joined(const std::vector<std::string>& metrics) {
  std::string out;
  for (const auto& m : metrics) out += (out.empty() ? "" : ",") + m;
  return out;
}

// One line of CSV: quoted fields, "" for a quote inside one.
std::vector<std::string> fields_of(std::string_view line) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.push_back(std::move(field));
      field.clear();
    } else if (c != '\r') {
      field += c;
    }
  }
  fields.push_back(std::move(field));
  return fields;
}

struct printed_number {
  double value = 0;
  double resolution = 0;  // half a unit in its last digit
};

// "134,308,864", "74.74" or "1.95638e+09"; none for "n/a" or an empty field.
std::optional<printed_number> number_of(std::string text) {
  std::erase(text, ',');
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  const std::size_t e = text.find_first_of("eE");
  const std::string mantissa = text.substr(0, e);
  const std::size_t point = mantissa.find('.');
  int decimals = point == std::string::npos ? 0 : static_cast<int>(mantissa.size() - point - 1);
  int exponent = 0;
  if (e == std::string::npos) {
    // ncu prints two decimals and drops trailing zeros ("0", "0.5"), so a plain number is known
    // to its second decimal at least.
    decimals = std::max(decimals, 2);
  } else {
    exponent = std::stoi(text.substr(e + 1));
  }
  return printed_number{value, 0.5 * std::pow(10.0, exponent - decimals)};
}

}  // namespace

std::vector<std::string> ncu_profile_arguments(const std::string& report, const std::string& log,
                                               const std::vector<std::string>& metrics,
                                               const std::vector<std::string_view>& uncounted) {
  // Every name but these whole ones (kernel names are identifiers: nothing to escape).
  const std::string counted = fmt::format("regex:^(?!({})$)", fmt::join(uncounted, "|"));
  // clang-format off
  return {"--clock-control", "none",
          "--cache-control", "none",
          "--replay-mode", "application",
          "--kernel-name", counted,
          "--metrics", joined(with_exact_ratios(metrics)),
          "--target-processes", "all",
          "--export", report, "--force-overwrite",
          "--log-file", log};
  // clang-format on
}

std::vector<std::string> ncu_import_arguments(const std::string& report_file,
                                              const std::string& csv,
                                              const std::vector<std::string>& metrics) {
  // clang-format off
  return {"--import", report_file,
          "--csv", "--page", "raw", "--print-units", "base",
          "--metrics", joined(with_exact_ratios(metrics)),
          "--log-file", csv};
  // clang-format on
}

counter_profile parse_ncu_csv(std::string_view csv, const std::vector<std::string>& metrics) {
  counter_profile p;
  p.source = "Nsight Compute";
  std::vector<std::string> header;
  std::size_t kernel_column = 0;
  int line_number = 0;
  for (std::size_t start = 0; start < csv.size();) {
    std::size_t end = csv.find('\n', start);
    if (end == std::string_view::npos) end = csv.size();
    const std::string_view line = csv.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (header.empty()) {
      if (!line.starts_with("\"ID\"")) continue;  // ncu's own messages come first
      header = fields_of(line);
      for (std::size_t i = 0; i < header.size(); ++i) {
        if (header[i] == "Kernel Name") kernel_column = i;
      }
      if (kernel_column == 0) {
        throw std::invalid_argument(fmt::format("line {}: no \"Kernel Name\" column", line_number));
      }
      continue;
    }
    const std::vector<std::string> fields = fields_of(line);
    if (fields.size() != header.size()) continue;  // a blank line or one of ncu's messages
    if (fields.front().empty()) continue;          // the units
    kernel_counters k{.launch = p.kernels.size(),
                      .kernel = fields[kernel_column],
                      .counters = {},
                      .occupancy = std::nullopt,
                      .resolution = {},
                      .range = {}};
    std::map<std::string, printed_number, std::less<>> printed;
    for (std::size_t i = 0; i < header.size(); ++i) {
      if (auto v = number_of(fields[i])) printed[header[i]] = *v;
    }
    for (const auto& m : metrics) {
      const auto v = printed.find(m);
      if (v == printed.end()) continue;
      k.counters[m] = v->second.value;
      k.resolution[m] = v->second.resolution;
      const auto count = stalled_count(m);
      if (!count) continue;
      const auto stalled = printed.find(*count);
      const auto issued = printed.find(issue_active);
      if (stalled == printed.end() || issued == printed.end() || issued->second.value <= 0) {
        continue;
      }
      // The quotient replaces the printed ratio only where it prints as that ratio does.
      const double exact = stalled->second.value / issued->second.value;
      if (std::abs(exact - v->second.value) <= v->second.resolution * (1 + 1e-9)) {
        k.counters[m] = exact;
        k.resolution.erase(m);
      }
    }
    p.kernels.push_back(std::move(k));
  }
  if (header.empty()) throw std::invalid_argument("no CSV header (\"ID\",...) in ncu's output");
  for (const auto& m : metrics) {
    bool seen = false;
    for (const auto& h : header) seen = seen || h == m;
    if (!seen) p.missing.push_back(m);
  }
  return p;
}

}  // namespace blaster
