#include "benchmarking/report/run_record.hpp"

#include <filesystem>
#include <optional>
#include <set>

#include <cuda.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "benchmarking/report/variant_metrics.hpp"
#include "core/cas_store.hpp"
#include "core/file_io.hpp"
#include "evidence/store.hpp"

namespace blaster {
namespace {

using json = nlohmann::json;

// -1 is what a resource report did not say.
std::optional<std::int64_t> known(int value) {
  return value < 0 ? std::nullopt : std::optional<std::int64_t>(value);
}

}  // namespace

void record_run(store& records, std::int64_t run_id, const task_spec& task,
                const bench_report& report) {
  task_record t{.name = task.name,
                .title = task.title,
                .spec_sha256 = records.cas().put(read_file(task.dir / "task.json"))};
  for (const auto& c : task.cases) {
    json symbols = json::object();
    for (const auto& [name, value] : c.values) symbols[name] = value;
    t.cases.push_back({.name = c.name,
                       .canonical = c.name == task.canonical_case,
                       .shape = task.describe(c),
                       .symbols_json = symbols.dump()});
  }
  records.set_run_task(run_id, records.record_task(t));
  if (report.device) {
    const auto& d = *report.device;
    records.set_run_device(
        run_id,
        records.record_device(
            {.name = d.name,
             .uuid = d.uuid,
             .compute_capability = fmt::format("{}.{}", d.compute_major, d.compute_minor),
             .arch = d.arch(),
             .sm_count = d.sm_count,
             .sm_clock_khz = d.sm_clock_khz,
             .memory_clock_khz = d.memory_clock_khz,
             .memory_bus_width_bits = d.memory_bus_width_bits,
             .total_memory_bytes = static_cast<std::int64_t>(d.total_memory_bytes),
             .l2_bytes = d.l2_bytes,
             .driver_version =
                 fmt::format("{}.{}", d.driver_version / 1000, d.driver_version % 1000 / 10),
             .cuda_version = fmt::format("{}.{}", CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10),
             .nvrtc_version = report.nvrtc}));
  }
  std::optional<std::int64_t> baseline_measurement;
  std::vector<std::pair<std::int64_t, const variant_result*>> measured;
  // What each result's row cites: its compilation and measurement, where it has them.
  std::vector<std::optional<std::int64_t>> compilations(report.results.size());
  std::vector<std::optional<std::int64_t>> measurements(report.results.size());
  // A variant's compilation, checks and measurement; the variant's own row is written whatever
  // of these fails, so that a run that failed midway still lists every variant it reached.
  auto record_evidence_of = [&](std::size_t i) {
    const variant_result& r = report.results[i];
    if ((r.reason == reason_code::plan_error || r.reason == reason_code::compile_error) &&
        r.cubin_sha256.empty() && r.log.empty()) {
      return;  // the file was refused (its plan, its size, its includes): nothing was compiled
    }
    compilation_record c{.candidate = r.candidate,
                         .variant = r.label,
                         .file_name = r.file,
                         .source_sha256 = r.source_sha256,
                         .arch = report.arch,
                         .nvrtc_version = report.nvrtc,
                         .succeeded = !r.cubin_sha256.empty(),
                         .log_sha256 = r.log.empty() ? std::string() : records.cas().put(r.log),
                         .cubin_sha256 = r.cubin_sha256,
                         .compile_ms = r.compile_ms,
                         .cache_hit = r.cache_hit};
    for (const auto& k : r.resources) {
      c.kernels.push_back({.kernel = k.lowered_name,
                           .registers = known(k.registers),
                           .stack_bytes = known(k.stack_bytes),
                           .spill_store_bytes = known(k.spill_store_bytes),
                           .spill_load_bytes = known(k.spill_load_bytes),
                           .shared_bytes = known(k.shared_bytes),
                           .barriers = known(k.barriers)});
    }
    const std::int64_t compilation = records.record_compilation(run_id, c);
    compilations[i] = compilation;
    for (const auto& check : r.checks) {
      gate_result_record g{.case_name = check.case_name,
                           .seed = check.seed,
                           .passed = check.reason == reason_code::none,
                           .reason = std::string(to_string(check.reason)),
                           .message = check.message};
      json outputs = json::array();
      for (const auto& m : check.outputs) {
        outputs.push_back({{"buffer", m.buffer},
                           {"p50", m.p50},
                           {"p90", m.p90},
                           {"p99", m.p99},
                           {"p999", m.p999}});
      }
      if (!check.outputs.empty()) {
        const error_metrics& m = check.outputs.front();
        g.max_abs_error = m.max_abs;
        g.max_rel_error = m.max_rel;
        g.mismatches = m.mismatches;
        g.nonfinite = m.nonfinite;
        g.unwritten = m.unwritten;
      }
      // Infinite quantiles do not survive JSON; the worker's own report does, in the CAS.
      g.metrics_json =
          json({{"outputs", outputs}}).dump(-1, ' ', false, json::error_handler_t::replace);
      g.evidence_sha256 = records.cas().put(to_json(check.evidence).dump());
      records.record_gate_result(compilation, g);
    }
    if (r.status != "passed") return;
    const std::int64_t measurement = records.record_measurement(
        compilation, {.case_name = report.timed_case,
                      .mode = std::string(to_string(report.timing.mode)),
                      .protocol_json = to_json(report.timing).dump(),
                      .samples_sha256 = r.samples_sha256,
                      .sample_count = static_cast<std::int64_t>(r.timing->sample_us.size()),
                      .median_us = *r.time_us,
                      .stdrel = r.max_noise,
                      .statistics_json = json({{"sessions", r.session_medians_us},
                                               {"spread", r.session_spread},
                                               {"kernel_us", r.timing->cupti.kernel_us},
                                               {"launch_bound", r.launch_bound}})
                                             .dump()});
    if (r.baseline) baseline_measurement = measurement;
    measurements[i] = measurement;
    measured.emplace_back(measurement, &r);
  };
  for (std::size_t i = 0; i < report.results.size(); ++i) {
    try {
      record_evidence_of(i);
    } catch (const std::exception& e) {
      spdlog::warn("run {}: the record of {} is incomplete: {}", run_id, report.results[i].label,
                   e.what());
    }
  }
  for (const auto& [measurement, r] : measured) {
    verdict_record v{.measurement_id = measurement,
                     .baseline_measurement_id = r->baseline ? std::nullopt : baseline_measurement,
                     .verdict = r->baseline ? "baseline" : "inconclusive",
                     .speedup = r->speedup};
    if (r->verdict) {
      v.verdict = std::string(to_string(r->verdict->v));
      v.speedup_ci_low = r->verdict->speedup.low;
      v.speedup_ci_high = r->verdict->speedup.high;
      v.detail_json = json({{"why", r->verdict->why}}).dump();
    }
    records.record_verdict(run_id, v);
  }

  // What each variant came to, with every metric it has a value for.
  std::vector<metric_definition> definitions;
  for (const auto& m : variant_metrics()) {
    definitions.push_back({.tag = std::string(m.info.tag),
                           .name = std::string(m.info.name),
                           .unit = std::string(m.info.unit),
                           .description = std::string(m.info.description),
                           .format = std::string(m.info.format),
                           .console = m.console});
  }
  records.record_metric_definitions(definitions);
  for (std::size_t i = 0; i < report.results.size(); ++i) {
    const variant_result& r = report.results[i];
    variant_result_record v{
        .compilation_id = compilations[i],
        .measurement_id = measurements[i],
        .candidate = r.candidate,
        .variant = r.label,
        .file_name = r.file,
        .baseline = r.baseline,
        .case_name = report.timed_case,
        .status = r.status,
        .reason = std::string(to_string(r.reason)),
        .message = r.message,
        .params_json = json(r.params).dump(),
        .detail_json = json({{"gate_s", r.gate_s}, {"timing_s", r.timing_s}}).dump()};
    // What no compilation or measurement of the row cites stays on the row itself.
    if (!compilations[i]) {
      v.source_sha256 = r.source_sha256;
      v.cubin_sha256 = r.cubin_sha256;
    }
    if (!measurements[i]) v.samples_sha256 = r.samples_sha256;
    if (r.profile) {
      v.diagnostics = diagnosis_record{
          .bound = r.profile->diagnosis ? std::string(to_string(r.profile->diagnosis->bound)) : "",
          .diagnosis = r.profile->diagnosis ? r.profile->diagnosis->line : "",
          .unavailable = r.profile->counters.unavailable,
          .profile_sha256 = records.cas().put(to_json(*r.profile).dump()),
          .ncu_report_sha256 = r.profile->ncu_report_sha256};
    }
    const json metrics = metric_values(report, r);
    for (const auto& [tag, value] : metrics.items())
      v.metrics.emplace_back(tag, value.get<double>());
    records.record_variant_result(run_id, v);
  }
  // The tuned tables that chose a configuration, once each: a bundle of the run carries them.
  std::set<std::string> tables;
  for (const variant_result& r : report.results) {
    if (!r.tuned || r.tuned->sha256.empty()) continue;
    const std::string name = "tuned/" + std::filesystem::path(r.tuned->file).filename().string();
    if (!tables.insert(name).second) continue;
    records.record_artifact(run_id, {.kind = "tuned_table",
                                     .name = name,
                                     .sha256 = r.tuned->sha256,
                                     .media_type = "application/json"});
  }
}

}  // namespace blaster
