#include "benchmarking/report/result_printer.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "benchmarking/profile/profile_table.hpp"
#include "benchmarking/report/variant_metrics.hpp"
#include "benchmarking/tuned/tuned_lookup.hpp"
#include "evidence/table_renderer.hpp"

namespace blaster {
namespace {

// The first lines of a long NVRTC log; the full log is in --json and in the store.
std::string head(const std::string& text, int lines) {
  std::size_t pos = 0;
  for (int i = 0; i < lines && pos != std::string::npos; ++i) {
    pos = text.find('\n', pos == 0 ? 0 : pos + 1);
  }
  return pos == std::string::npos ? text : text.substr(0, pos) + "\n    ...";
}



constexpr metric_info candidate_column{.tag = "variant", .name = "candidate"};
constexpr metric_info status_column{.tag = "status", .name = "status"};

std::vector<std::string> bench_preamble(const bench_report& report) {
  std::vector<std::string> lines;
  lines.push_back(fmt::format("task {}: {}", report.task, report.title));
  lines.push_back(fmt::format(
      "case {} ({}), {} · timing: {}, {}, median per launch, samples of ~{} ms until the noise "
      "is at most {:.2g}% ({} to {} samples)",
      report.timed_case, report.timed_shape, report.dtype, to_string(report.timing.mode),
      traits_of(report.timing.mode).clock, report.timing.target_sample_ms,
      100.0 * report.timing.max_noise, report.timing.min_samples, report.timing.max_samples));
  if (report.device) {
    lines.push_back(fmt::format("GPU {} ({}, {} SMs, driver {}.{}) · NVRTC {} · blaster {}",
                                report.device->name, report.device->arch(),
                                report.device->sm_count, report.device->driver_version / 1000,
                                report.device->driver_version % 1000 / 10, report.nvrtc,
                                report.blaster_revision));
  }
  if (report.memory) {
    const memory_ceilings& m = *report.memory;
    lines.push_back(fmt::format(
        "memory ceilings measured by blaster: copy {:.1f} GB/s, read {:.1f}, write {:.1f}, L2 "
        "{:.1f} (peak {:.1f}) · roofline bytes {} ({})",
        m.copy.bytes_per_second / 1e9, m.read.bytes_per_second / 1e9,
        m.write.bytes_per_second / 1e9, m.l2.bytes_per_second / 1e9,
        m.peak_bytes_per_second / 1e9, report.roofline_bytes,
        report.roofline_mix_known ? fmt::format("{} read, {} written", report.roofline_read_bytes,
                                                report.roofline_write_bytes)
                                  : std::string("read and written not stated apart")));
  }
  if (report.matrix) {
    lines.push_back(fmt::format("matrix rate measured by blaster: {:.1f} TFLOP/s ({}) · roofline "
                                "flops {}",
                                report.matrix->flops_per_second / 1e12, report.matrix->config,
                                report.roofline_flops));
  }
  if (report.timing.rotate_buffers && traits_of(report.timing.mode).rotates_buffers) {
    for (const auto& r : report.results) {
      if (!r.timing) continue;
      lines.push_back(fmt::format(
          "buffers rotated over {} copies, so that one sample's data exceeds the L2",
          r.timing->buffer_copies));
      break;
    }
  }
  if (report.sanitize) {
    lines.push_back(fmt::format(
        "compute-sanitizer on the small cases of every variant that passed: {}",
        report.sanitizer.empty() ? std::string("not run") : report.sanitizer));
  }
  if (report.floors) {
    std::vector<std::string> floors;
    for (const auto& mode : timing_modes()) {
      floors.push_back(fmt::format("{} {:.2f} us", mode.name, report.floors->us[mode.mode]));
    }
    lines.push_back(fmt::format("launch floors (an empty kernel): {}", fmt::join(floors, ", ")));
  }
  return lines;
}

std::vector<std::string> bench_notes(const bench_report& report,
                                     const std::vector<const variant_metric*>& shown) {
  const timing_mode_traits& mode = traits_of(report.timing.mode);
  std::vector<std::string> legend;
  for (const variant_metric* m : shown) {
    legend.push_back(fmt::format("{}: {}", m->info.name, m->info.description));
  }
  std::vector<std::string> notes;
  notes.push_back(fmt::format(
      "{}. Timing: {} session(s), each sample {}; kernel us from CUPTI over {}; samples taken "
      "while the SM clock ran below {:.0f}% of its rated {} MHz are dropped. Verdicts need at "
      "least 5 sessions (--confirm); the interval is a paired bootstrap over sessions (seed {}).",
      fmt::join(legend, "; "), report.sessions, mode.clock_legend, mode.kernel_legend,
      100.0 * report.timing.min_clock_fraction,
      report.device ? report.device->sm_clock_khz / 1000 : 0, report.bootstrap_seed));
  if (report.aa) {
    notes.push_back(fmt::format("A/A self-check: the baseline against itself {:.4f} ({}within "
                                "{:.0f}%){}",
                                report.aa->ratio, report.aa->within ? "" : "NOT ",
                                100.0 * report.aa->bound,
                                report.aa->within ? "" : ": the machine is too noisy for these "
                                                         "numbers"));
  }
  if (report.gpus.size() > 1) {
    std::vector<std::string> uuids;
    for (const auto& g : report.gpus) uuids.push_back(g.uuid);
    notes.push_back(fmt::format(
        "GPUs: the gates (and a screening session) spread over {} {} ({}); every session that a "
        "verdict compares ran on the first. Each result's JSON names its gated_on and timed_on.",
        report.gpus.size(), report.gpus.front().name, fmt::join(uuids, ", ")));
  }
  for (const variant_result& r : report.results) {
    if (r.tuned) notes.push_back(fmt::format("tuned: {} is {}", r.label, describe(*r.tuned)));
  }
  for (const auto& warning : report.warnings) {
    notes.push_back(fmt::format("warning (task design): {}", warning));
  }
  for (const auto& line : report.left_out) notes.push_back(fmt::format("not judged: {}", line));
  notes.push_back(fmt::format(
      "* baseline (the task's init.cu). Every case checked with {} seeds (run seed {}; a large "
      "case only when it is timed, with the run seed); each evaluation in {}, deadline {:.1f} s.",
      report.seeds.size(), report.seed,
      report.kept_worker ? "a CUDA context of its own in the loop's kept worker process"
                         : "its own process",
      report.deadline_s));
  notes.push_back(fmt::format("Run {} recorded in {} ({:.1f} s).", report.run_id, report.home,
                              report.wall_ms / 1000.0));
  return notes;
}

std::string verdict_text(const variant_result& r) {
  std::string verdict = r.launch_bound ? "launch-bound; " : "";
  if (r.screened) verdict += "screened out after session 1";
  if (r.verdict) {
    verdict += fmt::format("{} [{:.3f}, {:.3f}]", to_string(r.verdict->v), r.verdict->speedup.low,
                           r.verdict->speedup.high);
  }
  return verdict;
}

}  // namespace

// "_Z15layernorm_applyILi512ELi4EEv..." -> "layernorm_apply<512, 4>": the name with its template
// arguments, without return type and parameters. A name that does not demangle stays as it is.
std::string readable_kernel(const std::string& mangled) {
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> text(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || text == nullptr) return mangled;
  std::string name(text.get());
  // The parameter list: from the final ')' back to its '('.
  if (!name.empty() && name.back() == ')') {
    int depth = 0;
    for (std::size_t i = name.size(); i-- > 0;) {
      if (name[i] == ')') ++depth;
      if (name[i] == '(' && --depth == 0) {
        name.resize(i);
        break;
      }
    }
  }
  // The return type ends at the last space outside template arguments.
  int depth = 0;
  for (std::size_t i = name.size(); i-- > 0;) {
    if (name[i] == '>') ++depth;
    if (name[i] == '<') --depth;
    if (name[i] == ' ' && depth == 0) return name.substr(i + 1);
  }
  return name;
}

result_table bench_table(const bench_report& report, bool console) {
  result_table t;
  t.title = fmt::format("{}, case {}", report.task, report.timed_case);
  t.preamble = bench_preamble(report);
  t.columns.push_back({.metric = metric_definition::of(candidate_column), .width = 9, .left = true});
  t.columns.push_back({.metric = metric_definition::of(status_column), .width = 8, .left = true});
  std::vector<const variant_metric*> shown;
  for (const auto& m : variant_metrics()) {
    if (console && !m.console) continue;
    shown.push_back(&m);
    t.columns.push_back({.metric = metric_definition::of(m.info), .width = m.width, .left = false});
  }
  t.columns.push_back({.metric = {.tag = "verdict",
                                  .name = "verdict (95% interval of the speedup)",
                                  .description = "improved, no_improvement or inconclusive"},
                       .width = 0,
                       .left = true});
  for (const auto& r : report.results) {
    table_row row;
    row.cells.emplace_back(r.baseline ? r.label + " *" : r.label);
    row.cells.emplace_back(r.status);
    if (r.status == "passed") {
      for (const variant_metric* m : shown) {
        if (const auto v = m->value(report, r)) {
          row.cells.emplace_back(*v);
        } else {
          row.cells.emplace_back(std::monostate{});
        }
      }
      row.cells.emplace_back(verdict_text(r));
      const cupti_account& cupti = r.timing->cupti;
      // A plan of several kernels: which of them the time goes to.
      if (cupti.kernels.size() > 1) {
        std::vector<std::string> parts;
        for (const auto& k : cupti.kernels) {
          parts.push_back(fmt::format("{} {:.2f}", readable_kernel(k.kernel), k.us));
        }
        row.details.push_back(fmt::format("kernel us by kernel: {}", fmt::join(parts, ", ")));
      }
      if (!cupti.error.empty()) row.details.push_back("error (CUPTI): " + cupti.error);
      if (r.profile) {
        for (auto& line : diagnostic_lines(*r.profile)) row.details.push_back(std::move(line));
      }
    } else {
      row.cells.resize(t.columns.size());
      row.summary = std::string(to_string(r.reason));
      if (!r.message.empty()) row.details.push_back(r.message);
      if (r.reason == reason_code::compile_error) row.details.push_back(head(r.log, 6));
    }
    t.rows.push_back(std::move(row));
  }
  t.notes = bench_notes(report, shown);
  return t;
}

result_table compile_table(const bench_report& report) {
  result_table t;
  t.title = fmt::format("{}, compiled for {}", report.task, report.arch);
  t.preamble.push_back(
      fmt::format("task {}: compiled for {} with NVRTC {}", report.task, report.arch,
                  report.nvrtc));
  // -1 is what the report did not say: the driver, where it stands in for ptxas, does not count
  // spills or barriers.
  auto count = [](int v) { return v < 0 ? table_cell() : table_cell(static_cast<double>(v)); };
  const std::array<table_column, 8> columns{{
      {.metric = metric_definition::of(candidate_column), .width = 9, .left = true},
      {.metric = metric_definition::of(status_column), .width = 14, .left = true},
      {.metric = {.tag = "registers", .name = "regs", .description = "registers per thread",
                  .format = "{:.0f}"},
       .width = 4},
      {.metric = {.tag = "stack_bytes", .name = "stack", .unit = "bytes",
                  .description = "stack frame per thread", .format = "{:.0f}"},
       .width = 5},
      {.metric = {.tag = "spill_bytes", .name = "spill", .unit = "bytes",
                  .description = "spill stores and loads per thread", .format = "{:.0f}"},
       .width = 6},
      {.metric = {.tag = "shared_bytes", .name = "smem", .unit = "bytes",
                  .description = "static shared memory per block", .format = "{:.0f}"},
       .width = 6},
      {.metric = {.tag = "barriers", .name = "bars", .description = "named barriers",
                  .format = "{:.0f}"},
       .width = 5},
      {.metric = {.tag = "compile_ms", .name = "ms", .unit = "ms",
                  .description = "NVRTC's time for the variant", .format = "{:.1f}"},
       .width = 8},
  }};
  t.columns.assign(columns.begin(), columns.end());
  t.columns.push_back({.metric = {.tag = "cache", .name = ""}, .width = 0, .left = true});
  for (const auto& r : report.results) {
    const std::string status =
        r.reason == reason_code::none ? std::string("compiled") : std::string(to_string(r.reason));
    std::vector<std::string> details;
    if (!r.message.empty()) details.push_back(r.message);
    if (r.reason == reason_code::compile_error) details.push_back(r.log);
    if (r.resources.empty()) {
      table_row row{.cells = {r.label, status}, .summary = {}, .details = details};
      row.cells.resize(t.columns.size());
      t.rows.push_back(std::move(row));
    }
    for (std::size_t i = 0; i < r.resources.size(); ++i) {
      const kernel_resources& k = r.resources[i];
      const int spill = k.spill_store_bytes < 0 ? -1 : k.spill_store_bytes + k.spill_load_bytes;
      table_row row{.cells = {r.label, status, count(k.registers), count(k.stack_bytes),
                              count(spill), count(k.shared_bytes), count(k.barriers), r.compile_ms,
                              r.cache_hit ? table_cell("(cached)") : table_cell()},
                    .summary = {},
                    .details = {}};
      if (i + 1 == r.resources.size()) row.details = details;
      t.rows.push_back(std::move(row));
    }
  }
  return t;
}

void print_bench_table(const bench_report& report, std::ostream& out) {
  make_renderer("table")->render(bench_table(report, /*console=*/true), out);
}

void print_compile_table(const bench_report& report, std::ostream& out) {
  make_renderer("table")->render(compile_table(report), out);
}

}  // namespace blaster
