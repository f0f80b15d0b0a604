// The fuller record of a run (schema version 2 on): the store's typed record_* methods.
#include <sys/stat.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/sha256.hpp"
#include "evidence/detail/row_binding.hpp"
#include "evidence/store.hpp"

namespace blaster {
namespace {

using detail::bind_int_or_null;
using detail::bind_real_or_null;
using detail::bind_text_or_null;
using detail::insert_returning_id;
using detail::require_json;

// Identical fields, identical digest: the row's natural key.
std::string fingerprint_digest(const device_fingerprint& d) {
  const nlohmann::json j = {
      {"name", d.name},
      {"uuid", d.uuid},
      {"compute_capability", d.compute_capability},
      {"arch", d.arch},
      {"sm_count", d.sm_count ? nlohmann::json(*d.sm_count) : nullptr},
      {"sm_clock_khz", d.sm_clock_khz ? nlohmann::json(*d.sm_clock_khz) : nullptr},
      {"memory_clock_khz", d.memory_clock_khz ? nlohmann::json(*d.memory_clock_khz) : nullptr},
      {"memory_bus_width_bits",
       d.memory_bus_width_bits ? nlohmann::json(*d.memory_bus_width_bits) : nullptr},
      {"total_memory_bytes",
       d.total_memory_bytes ? nlohmann::json(*d.total_memory_bytes) : nullptr},
      {"l2_bytes", d.l2_bytes ? nlohmann::json(*d.l2_bytes) : nullptr},
      {"driver_version", d.driver_version},
      {"cuda_version", d.cuda_version},
      {"nvrtc_version", d.nvrtc_version}};
  return sha256_hex(j.dump());
}

// The run that a measurement's compilation belongs to; throws when there is no such measurement.
std::int64_t run_of_measurement(database& db, std::int64_t measurement_id) {
  statement query = db.prepare(
      "SELECT c.run_id FROM measurements m JOIN compilations c ON c.id = m.compilation_id "
      "WHERE m.id = ?1");
  query.bind(1, measurement_id);
  if (!query.step()) BLASTER_THROW("no measurement with id {}", measurement_id);
  return query.column_int64(0);
}

// The run that a compilation belongs to; throws when there is no such compilation.
std::int64_t run_of_compilation(database& db, std::int64_t compilation_id) {
  statement query = db.prepare("SELECT run_id FROM compilations WHERE id = ?1");
  query.bind(1, compilation_id);
  if (!query.step()) BLASTER_THROW("no compilation with id {}", compilation_id);
  return query.column_int64(0);
}

}  // namespace

std::int64_t store::record_device(const device_fingerprint& device) {
  if (device.name.empty() || device.compute_capability.empty()) {
    BLASTER_THROW("record_device: a device needs a name and a compute capability");
  }
  // The upsert's no-op update makes RETURNING give the existing row's id too.
  statement insert = db_.prepare(
      "INSERT INTO device_fingerprints(fingerprint_sha256, name, uuid, compute_capability, arch, "
      "sm_count, sm_clock_khz, memory_clock_khz, memory_bus_width_bits, total_memory_bytes, "
      "l2_bytes, driver_version, cuda_version, nvrtc_version) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) "
      "ON CONFLICT(fingerprint_sha256) DO UPDATE SET name = excluded.name RETURNING id");
  insert.bind(1, fingerprint_digest(device));
  insert.bind(2, device.name);
  bind_text_or_null(insert, 3, device.uuid);
  insert.bind(4, device.compute_capability);
  bind_text_or_null(insert, 5, device.arch);
  bind_int_or_null(insert, 6, device.sm_count);
  bind_int_or_null(insert, 7, device.sm_clock_khz);
  bind_int_or_null(insert, 8, device.memory_clock_khz);
  bind_int_or_null(insert, 9, device.memory_bus_width_bits);
  bind_int_or_null(insert, 10, device.total_memory_bytes);
  bind_int_or_null(insert, 11, device.l2_bytes);
  bind_text_or_null(insert, 12, device.driver_version);
  bind_text_or_null(insert, 13, device.cuda_version);
  bind_text_or_null(insert, 14, device.nvrtc_version);
  return insert_returning_id(insert, "device_fingerprints");
}

void store::set_run_device(std::int64_t run_id, std::int64_t device_id) {
  statement update = db_.prepare("UPDATE runs SET device_id = ?1 WHERE id = ?2");
  update.bind(1, device_id);
  update.bind(2, run_id);
  update.step();
  if (db_.changes() != 1) BLASTER_THROW("set_run_device: no run with id {}", run_id);
}

std::int64_t store::record_task(const task_record& task) {
  if (task.name.empty()) BLASTER_THROW("record_task: a task needs a name");
  if (task.spec_sha256.empty()) BLASTER_THROW("record_task: task {} has no spec_sha256", task.name);
  require_object("tasks.spec_sha256", task.spec_sha256);
  for (const auto& c : task.cases) require_json("task_cases.symbols_json", c.symbols_json);
  transaction guard(db_);
  statement insert = db_.prepare(
      "INSERT INTO tasks(name, title, spec_sha256) VALUES(?1, ?2, ?3) "
      "ON CONFLICT(name, spec_sha256) DO UPDATE SET title = excluded.title RETURNING id");
  insert.bind(1, task.name);
  bind_text_or_null(insert, 2, task.title);
  insert.bind(3, task.spec_sha256);
  const std::int64_t task_id = insert_returning_id(insert, "tasks");
  // The same spec has the same cases: a second recording adds nothing.
  statement add_case = db_.prepare(
      "INSERT OR IGNORE INTO task_cases(task_id, name, canonical, shape, symbols_json) "
      "VALUES(?1, ?2, ?3, ?4, ?5)");
  for (const auto& c : task.cases) {
    add_case.reset();
    add_case.bind(1, task_id);
    add_case.bind(2, c.name);
    add_case.bind(3, c.canonical ? 1 : 0);
    bind_text_or_null(add_case, 4, c.shape);
    bind_text_or_null(add_case, 5, c.symbols_json);
    add_case.step();
  }
  guard.commit();
  return task_id;
}

void store::set_run_task(std::int64_t run_id, std::int64_t task_id) {
  statement update = db_.prepare("UPDATE runs SET task_id = ?1 WHERE id = ?2");
  update.bind(1, task_id);
  update.bind(2, run_id);
  update.step();
  if (db_.changes() != 1) BLASTER_THROW("set_run_task: no run with id {}", run_id);
}

std::int64_t store::record_compilation(std::int64_t run_id, const compilation_record& c) {
  if (c.source_sha256.empty()) {
    BLASTER_THROW("record_compilation: {} has no source_sha256", c.variant);
  }
  if (c.arch.empty()) BLASTER_THROW("record_compilation: {} has no arch", c.variant);
  require_object("sources.sha256", c.source_sha256);
  require_object("compilations.log_sha256", c.log_sha256);
  require_object("compilations.cubin_sha256", c.cubin_sha256);
  struct stat source_info {};
  const std::filesystem::path source_path = cas_.path_of(c.source_sha256);
  if (::stat(source_path.c_str(), &source_info) != 0) {
    BLASTER_THROW("stat({}) failed: {}", source_path.string(), std::strerror(errno));
  }
  const std::string file_name = c.file_name.empty() ? c.candidate : c.file_name;

  transaction guard(db_);
  statement source = db_.prepare(
      "INSERT INTO sources(sha256, file_name, size_bytes) VALUES(?1, ?2, ?3) "
      "ON CONFLICT(sha256, file_name) DO UPDATE SET size_bytes = excluded.size_bytes "
      "RETURNING id");
  source.bind(1, c.source_sha256);
  source.bind(2, file_name);
  source.bind(3, static_cast<std::int64_t>(source_info.st_size));
  const std::int64_t source_id = insert_returning_id(source, "sources");

  statement insert = db_.prepare(
      "INSERT INTO compilations(run_id, source_id, candidate, variant, arch, options_json, "
      "nvrtc_version, succeeded, log_sha256, cubin_sha256, compile_ms, cache_hit) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) RETURNING id");
  insert.bind(1, run_id);
  insert.bind(2, source_id);
  insert.bind(3, c.candidate);
  insert.bind(4, c.variant);
  insert.bind(5, c.arch);
  insert.bind(6, nlohmann::json(c.options).dump());
  bind_text_or_null(insert, 7, c.nvrtc_version);
  insert.bind(8, c.succeeded ? 1 : 0);
  bind_text_or_null(insert, 9, c.log_sha256);
  bind_text_or_null(insert, 10, c.cubin_sha256);
  bind_real_or_null(insert, 11, c.compile_ms);
  insert.bind(12, c.cache_hit ? 1 : 0);
  const std::int64_t compilation_id = insert_returning_id(insert, "compilations");

  statement kernel = db_.prepare(
      "INSERT INTO compiled_kernels(compilation_id, kernel, registers, stack_bytes, "
      "spill_store_bytes, spill_load_bytes, shared_bytes, barriers) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  for (const auto& k : c.kernels) {
    kernel.reset();
    kernel.bind(1, compilation_id);
    kernel.bind(2, k.kernel);
    bind_int_or_null(kernel, 3, k.registers);
    bind_int_or_null(kernel, 4, k.stack_bytes);
    bind_int_or_null(kernel, 5, k.spill_store_bytes);
    bind_int_or_null(kernel, 6, k.spill_load_bytes);
    bind_int_or_null(kernel, 7, k.shared_bytes);
    bind_int_or_null(kernel, 8, k.barriers);
    kernel.step();
  }
  guard.commit();
  return compilation_id;
}

std::int64_t store::record_gate_result(std::int64_t compilation_id, const gate_result_record& g) {
  if (g.case_name.empty()) BLASTER_THROW("record_gate_result: no case name");
  require_json("gate_results.metrics_json", g.metrics_json);
  require_object("gate_results.evidence_sha256", g.evidence_sha256);
  statement insert = db_.prepare(
      "INSERT INTO gate_results(compilation_id, case_name, seed, passed, reason, message, "
      "max_abs_error, max_rel_error, mismatches, nonfinite, unwritten, metrics_json, "
      "evidence_sha256) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) "
      "RETURNING id");
  insert.bind(1, compilation_id);
  insert.bind(2, g.case_name);
  // As text: a 64-bit unsigned seed does not fit SQLite's signed integers.
  insert.bind(3, std::to_string(g.seed));
  insert.bind(4, g.passed ? 1 : 0);
  bind_text_or_null(insert, 5, g.reason);
  bind_text_or_null(insert, 6, g.message);
  bind_real_or_null(insert, 7, g.max_abs_error);
  bind_real_or_null(insert, 8, g.max_rel_error);
  bind_int_or_null(insert, 9, g.mismatches);
  bind_int_or_null(insert, 10, g.nonfinite);
  bind_int_or_null(insert, 11, g.unwritten);
  bind_text_or_null(insert, 12, g.metrics_json);
  bind_text_or_null(insert, 13, g.evidence_sha256);
  return insert_returning_id(insert, "gate_results");
}

std::int64_t store::record_measurement(std::int64_t compilation_id, const measurement_record& m) {
  if (m.case_name.empty() || m.mode.empty()) {
    BLASTER_THROW("record_measurement: a measurement needs a case name and a mode");
  }
  if (m.protocol_json.empty()) BLASTER_THROW("record_measurement: no protocol_json");
  if (m.samples_sha256.empty()) BLASTER_THROW("record_measurement: no samples_sha256");
  require_json("measurements.protocol_json", m.protocol_json);
  require_json("measurements.statistics_json", m.statistics_json);
  require_object("measurements.samples_sha256", m.samples_sha256);
  statement insert = db_.prepare(
      "INSERT INTO measurements(compilation_id, case_name, mode, protocol_json, samples_sha256, "
      "sample_count, median_us, mean_us, min_us, max_us, stdrel, statistics_json) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) RETURNING id");
  insert.bind(1, compilation_id);
  insert.bind(2, m.case_name);
  insert.bind(3, m.mode);
  insert.bind(4, m.protocol_json);
  insert.bind(5, m.samples_sha256);
  insert.bind(6, m.sample_count);
  insert.bind(7, m.median_us);
  bind_real_or_null(insert, 8, m.mean_us);
  bind_real_or_null(insert, 9, m.min_us);
  bind_real_or_null(insert, 10, m.max_us);
  bind_real_or_null(insert, 11, m.stdrel);
  bind_text_or_null(insert, 12, m.statistics_json);
  return insert_returning_id(insert, "measurements");
}

std::int64_t store::record_verdict(std::int64_t run_id, const verdict_record& v) {
  if (v.verdict.empty()) BLASTER_THROW("record_verdict: no verdict");
  require_json("verdicts.detail_json", v.detail_json);
  transaction guard(db_);
  // A verdict compares numbers of one run; a measurement of another run is a mix-up.
  for (const auto& id : {std::optional(v.measurement_id), v.baseline_measurement_id}) {
    if (id && run_of_measurement(db_, *id) != run_id) {
      BLASTER_THROW("record_verdict: measurement {} does not belong to run {}", *id, run_id);
    }
  }
  statement insert = db_.prepare(
      "INSERT INTO verdicts(run_id, measurement_id, baseline_measurement_id, verdict, speedup, "
      "speedup_ci_low, speedup_ci_high, detail_json) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
      "RETURNING id");
  insert.bind(1, run_id);
  insert.bind(2, v.measurement_id);
  bind_int_or_null(insert, 3, v.baseline_measurement_id);
  insert.bind(4, v.verdict);
  bind_real_or_null(insert, 5, v.speedup);
  bind_real_or_null(insert, 6, v.speedup_ci_low);
  bind_real_or_null(insert, 7, v.speedup_ci_high);
  bind_text_or_null(insert, 8, v.detail_json);
  const std::int64_t id = insert_returning_id(insert, "verdicts");
  guard.commit();
  return id;
}

std::int64_t store::record_artifact(std::int64_t run_id, const artifact_record& a) {
  if (a.kind.empty() || a.name.empty() || a.sha256.empty()) {
    BLASTER_THROW("record_artifact: an artifact needs a kind, a name and a sha256");
  }
  require_object("artifacts.sha256", a.sha256);
  statement insert = db_.prepare(
      "INSERT INTO artifacts(run_id, kind, name, sha256, media_type) "
      "VALUES(?1, ?2, ?3, ?4, ?5) RETURNING id");
  insert.bind(1, run_id);
  insert.bind(2, a.kind);
  insert.bind(3, a.name);
  insert.bind(4, a.sha256);
  bind_text_or_null(insert, 5, a.media_type);
  return insert_returning_id(insert, "artifacts");
}

std::int64_t store::record_variant_result(std::int64_t run_id, const variant_result_record& v) {
  if (v.candidate.empty() || v.variant.empty() || v.status.empty()) {
    BLASTER_THROW("record_variant_result: a variant result needs a candidate, a variant and a "
                  "status");
  }
  require_json("variant_results.params_json", v.params_json);
  require_json("variant_results.detail_json", v.detail_json);
  require_object("variant_results.source_sha256", v.source_sha256);
  require_object("variant_results.cubin_sha256", v.cubin_sha256);
  require_object("variant_results.samples_sha256", v.samples_sha256);
  transaction guard(db_);
  if (v.compilation_id && run_of_compilation(db_, *v.compilation_id) != run_id) {
    BLASTER_THROW("record_variant_result: compilation {} does not belong to run {}",
                  *v.compilation_id, run_id);
  }
  if (v.measurement_id && run_of_measurement(db_, *v.measurement_id) != run_id) {
    BLASTER_THROW("record_variant_result: measurement {} does not belong to run {}",
                  *v.measurement_id, run_id);
  }
  statement insert = db_.prepare(
      "INSERT INTO variant_results(run_id, compilation_id, measurement_id, candidate, variant, "
      "file_name, baseline, case_name, status, reason, message, params_json, source_sha256, "
      "cubin_sha256, samples_sha256, detail_json) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
      "?10, ?11, ?12, ?13, ?14, ?15, ?16) RETURNING id");
  insert.bind(1, run_id);
  bind_int_or_null(insert, 2, v.compilation_id);
  bind_int_or_null(insert, 3, v.measurement_id);
  insert.bind(4, v.candidate);
  insert.bind(5, v.variant);
  bind_text_or_null(insert, 6, v.file_name);
  insert.bind(7, static_cast<std::int64_t>(v.baseline ? 1 : 0));
  bind_text_or_null(insert, 8, v.case_name);
  insert.bind(9, v.status);
  bind_text_or_null(insert, 10, v.reason);
  bind_text_or_null(insert, 11, v.message);
  bind_text_or_null(insert, 12, v.params_json);
  bind_text_or_null(insert, 13, v.source_sha256);
  bind_text_or_null(insert, 14, v.cubin_sha256);
  bind_text_or_null(insert, 15, v.samples_sha256);
  bind_text_or_null(insert, 16, v.detail_json);
  const std::int64_t id = insert_returning_id(insert, "variant_results");
  if (const auto& d = v.diagnostics) {
    require_object("variant_diagnostics.profile_sha256", d->profile_sha256);
    require_object("variant_diagnostics.ncu_report_sha256", d->ncu_report_sha256);
    statement diagnosis = db_.prepare(
        "INSERT INTO variant_diagnostics(variant_result_id, bound, diagnosis, unavailable, "
        "profile_sha256, ncu_report_sha256) VALUES(?1, ?2, ?3, ?4, ?5, ?6)");
    diagnosis.bind(1, id);
    bind_text_or_null(diagnosis, 2, d->bound);
    bind_text_or_null(diagnosis, 3, d->diagnosis);
    bind_text_or_null(diagnosis, 4, d->unavailable);
    diagnosis.bind(5, d->profile_sha256);
    bind_text_or_null(diagnosis, 6, d->ncu_report_sha256);
    diagnosis.step();
  }
  for (const auto& [tag, value] : v.metrics) {
    // A quantity that is not a number has no row: SQLite would store NaN as NULL.
    if (!std::isfinite(value)) continue;
    statement metric = db_.prepare(
        "INSERT INTO variant_metrics(variant_result_id, tag, value) VALUES(?1, ?2, ?3)");
    metric.bind(1, id);
    metric.bind(2, tag);
    metric.bind(3, value);
    metric.step();
  }
  guard.commit();
  return id;
}

void store::record_metric_definitions(const std::vector<metric_definition>& definitions) {
  transaction guard(db_);
  for (const auto& d : definitions) {
    if (d.tag.empty() || d.name.empty()) {
      BLASTER_THROW("record_metric_definitions: a metric needs a tag and a name");
    }
    statement upsert = db_.prepare(
        "INSERT INTO metric_definitions(tag, name, unit, description, format, console) "
        "VALUES(?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(tag) DO UPDATE SET name = excluded.name, "
        "unit = excluded.unit, description = excluded.description, format = excluded.format, "
        "console = excluded.console");
    upsert.bind(1, d.tag);
    upsert.bind(2, d.name);
    upsert.bind(3, d.unit);
    upsert.bind(4, d.description);
    upsert.bind(5, d.format);
    upsert.bind(6, static_cast<std::int64_t>(d.console ? 1 : 0));
    upsert.step();
  }
  guard.commit();
}

}  // namespace blaster
