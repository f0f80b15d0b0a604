#include "benchmarking/profile/profile_table.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "benchmarking/report/result_printer.hpp"
#include "benchmarking/report/variant_metrics.hpp"
#include "profiling/counters.hpp"

namespace blaster {
namespace {

constexpr metric_info candidate_column{.tag = "variant", .name = "candidate"};
constexpr metric_info status_column{.tag = "status", .name = "status"};

std::string occupancy_line(const kernel_counters& k) {
  const occupancy_estimate& o = *k.occupancy;
  std::string line = fmt::format(
      "{}: theoretical occupancy {:.0f}% ({} block{} per SM, limited by {}: registers allow {}, "
      "shared memory {}, warps {}, blocks {})",
      readable_kernel(k.kernel), o.theoretical_pct, o.blocks_per_sm,
      o.blocks_per_sm == 1 ? "" : "s", o.limiter, o.by_registers, o.by_shared, o.by_warps,
      o.by_blocks);
  if (o.driver_blocks_per_sm && *o.driver_blocks_per_sm != o.blocks_per_sm) {
    line += fmt::format("; the driver says {} blocks per SM", *o.driver_blocks_per_sm);
  }
  return line;
}

// How many counts each variant's counters are the median of (the same for every variant).
int counted_runs_of(const bench_report& report) {
  for (const auto& r : report.results) {
    if (r.profile && r.profile->counters.unavailable.empty()) return r.profile->counters.runs;
  }
  return 1;
}

// "  counter (launch 0): CUPTI 1.1 [1.0, 1.2], ncu 1.14 [1.07, 1.17], 2.10% apart": each value
// with the spread of the counts it is the median of.
std::string agreement_line(const counter_agreement& a) {
  const auto value = [](double v, const std::optional<std::pair<double, double>>& range) {
    if (!range || range->first == range->second) return fmt::format("{:.6g}", v);
    return fmt::format("{:.6g} [{:.6g}, {:.6g}]", v, range->first, range->second);
  };
  return fmt::format("  {} (launch {}): CUPTI {}, ncu {}, {:.2f}% apart", a.counter, a.launch,
                     value(a.cupti, a.cupti_range), value(a.ncu, a.ncu_range), 100 * a.difference);
}

}  // namespace

std::vector<counter_agreement> ncu_agreement(const diagnostics& d) {
  std::vector<counter_agreement> out;
  if (!d.ncu) return out;
  for (const auto& k : d.counters.kernels) {
    if (k.launch >= d.ncu->kernels.size()) continue;
    const kernel_counters& n = d.ncu->kernels[k.launch];
    for (const auto& [name, cupti] : k.counters) {
      const auto it = n.counters.find(name);
      if (it == n.counters.end()) continue;
      // ncu's value stands for every number that prints as it does.
      const auto printed = n.resolution.find(name);
      const double apart =
          std::max(0.0, std::abs(it->second - cupti) -
                            (printed == n.resolution.end() ? 0.0 : printed->second));
      const double scale = std::max(std::abs(cupti), std::abs(it->second));
      const auto range_of =
          [&](const kernel_counters& of) -> std::optional<std::pair<double, double>> {
        const auto r = of.range.find(name);
        if (r == of.range.end()) return std::nullopt;
        return r->second;
      };
      out.push_back({.counter = name,
                     .launch = k.launch,
                     .cupti = cupti,
                     .ncu = it->second,
                     .cupti_range = range_of(k),
                     .ncu_range = range_of(n),
                     .difference = scale > 0 ? apart / scale : 0.0});
    }
  }
  return out;
}

std::vector<std::string> diagnostic_lines(const diagnostics& d) {
  std::vector<std::string> lines;
  if (!d.counters.unavailable.empty()) {
    lines.push_back("counters unavailable: " + d.counters.unavailable);
  }
  if (d.diagnosis) lines.push_back("diagnosis: " + d.diagnosis->line);
  for (const auto& k : d.counters.kernels) {
    if (k.occupancy) lines.push_back(occupancy_line(k));
  }
  if (!d.counters.missing.empty()) {
    lines.push_back(
        fmt::format("counters this chip lacks: {}", fmt::join(d.counters.missing, ", ")));
  }
  if (!d.ncu_unavailable.empty()) lines.push_back("ncu: " + d.ncu_unavailable);
  if (d.ncu) {
    const auto agreement = ncu_agreement(d);
    const auto worst =
        std::max_element(agreement.begin(), agreement.end(),
                         [](const auto& a, const auto& b) { return a.difference < b.difference; });
    std::string line = fmt::format("ncu report {}: {} counters beside CUPTI's",
                                   d.ncu_report_sha256.substr(0, 12), agreement.size());
    if (worst != agreement.end()) {
      line += fmt::format(", the farthest apart {} ({:.4g} against {:.4g}, {:.1f}%)",
                          worst->counter, worst->cupti, worst->ncu, 100 * worst->difference);
    }
    lines.push_back(line);
  }
  return lines;
}

result_table profile_table(const bench_report& report) {
  result_table t;
  t.title = fmt::format("{}, case {}: hardware counters", report.task, report.timed_case);
  t.preamble.push_back(fmt::format("task {}: {}", report.task, report.title));
  t.preamble.push_back(fmt::format(
      "case {} ({}), {} · each kernel counted on an empty L2 and SM caches that hold none of "
      "its code or parameters, inputs uploaded again and outputs poisoned again before each "
      "replay, the median of {} counts",
      report.timed_case, report.timed_shape, report.dtype, counted_runs_of(report)));
  if (report.device) {
    t.preamble.push_back(fmt::format(
        "GPU {} ({}, {} SMs) · NVRTC {} · blaster {}", report.device->name, report.device->arch(),
        report.device->sm_count, report.nvrtc, report.blaster_revision));
  }
  t.columns.push_back({.metric = metric_definition::of(candidate_column), .width = 9, .left = true});
  t.columns.push_back({.metric = metric_definition::of(status_column), .width = 8, .left = true});
  std::vector<const variant_metric*> shown;
  for (const auto& m : variant_metrics()) {
    if (!m.counter) continue;
    shown.push_back(&m);
    t.columns.push_back({.metric = metric_definition::of(m.info), .width = m.width, .left = false});
  }
  for (const auto& r : report.results) {
    table_row row;
    row.cells.emplace_back(r.baseline ? r.label + " *" : r.label);
    row.cells.emplace_back(r.status);
    for (const variant_metric* m : shown) {
      if (const auto v = m->value(report, r)) {
        row.cells.emplace_back(*v);
      } else {
        row.cells.emplace_back(std::monostate{});
      }
    }
    if (r.status == "rejected") {
      row.summary = std::string(to_string(r.reason));
      if (!r.message.empty()) row.details.push_back(r.message);
    }
    if (r.profile) {
      for (auto& line : diagnostic_lines(*r.profile)) row.details.push_back(std::move(line));
      if (r.profile->counters.kernels.size() > 1) {
        for (const auto& k : r.profile->counters.kernels) {
          const auto ns = k.counters.find(std::string(counter::duration_ns));
          const auto read = k.counters.find(std::string(counter::dram_bytes_read));
          row.details.push_back(fmt::format("launch {} {}: {:.2f} us, {:.4g} DRAM bytes read",
                                            k.launch, readable_kernel(k.kernel),
                                            ns == k.counters.end() ? 0.0 : ns->second / 1000.0,
                                            read == k.counters.end() ? 0.0 : read->second));
        }
      }
      for (const auto& a : ncu_agreement(*r.profile)) {
        row.details.push_back(agreement_line(a));
      }
    }
    t.rows.push_back(std::move(row));
  }
  std::vector<std::string> legend;
  for (const variant_metric* m : shown) {
    legend.push_back(fmt::format("{}: {}", m->info.name, m->info.description));
  }
  t.notes.push_back(fmt::format(
      "{}. Counters are diagnostics: they never change a verdict or a rank. Each is the "
      "Perfworks metric of the same name in `ncu --metrics`.",
      fmt::join(legend, "; ")));
  t.notes.push_back(
      fmt::format("* baseline (the task's init.cu). Run {} recorded in {} ({:.1f} s).",
                  report.run_id, report.home, report.wall_ms / 1000.0));
  return t;
}

}  // namespace blaster
