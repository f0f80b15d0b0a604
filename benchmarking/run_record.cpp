#include "benchmarking/run_record.hpp"

#include <optional>

#include <cuda.h>
#include <nlohmann/json.hpp>

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

void record_results(store& records, std::int64_t run_id, const bench_report& report) {
  for (const auto& r : report.results) {
    nlohmann::json detail = {{"message", r.message},
                             {"params", r.params},
                             {"compile_ms", r.compile_ms},
                             {"seed", report.seed},
                             {"gate_s", r.gate_s},
                             {"timing_s", r.timing_s},
                             {"session_medians_us", r.session_medians_us}};
    if (r.verdict) detail["verdict"] = std::string(to_string(r.verdict->v));
    records.add_result(run_id, result_record{
                                   .candidate = r.candidate,
                                   .variant = r.label,
                                   .case_name = report.timed_case,
                                   .status = r.status,
                                   .reason = std::string(to_string(r.reason)),
                                   .time_us = r.time_us,
                                   .speedup = r.speedup,
                                   .bandwidth_gbs = r.bandwidth_gbs,
                                   .roofline_pct = r.copy_bandwidth_pct,
                                   .source_sha256 = r.source_sha256,
                                   .cubin_sha256 = r.cubin_sha256,
                                   .samples_sha256 = r.samples_sha256,
                                   .detail_json = detail.dump(),
                               });
  }
}

void record_evidence(store& records, std::int64_t run_id, const task_spec& task,
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
  for (const auto& r : report.results) {
    if ((r.reason == reason_code::plan_error || r.reason == reason_code::compile_error) &&
        r.cubin_sha256.empty() && r.log.empty()) {
      continue;  // the file was refused (its plan, its size, its includes): nothing was compiled
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
    if (r.status != "passed") continue;
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
    measured.emplace_back(measurement, &r);
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
}

}  // namespace blaster
