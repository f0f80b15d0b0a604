#include "evidence/store.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <sstream>
#include <system_error>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/sha256.hpp"
#include "evidence/store_schema.hpp"

namespace blaster {
namespace {

// UTC, ISO-8601, millisecond precision, e.g. 2025-01-31T12:34:56.789Z.
std::string utc_now_iso8601() {
  using namespace std::chrono;
  const auto now_ms = time_point_cast<milliseconds>(system_clock::now());
  const std::time_t now_s = system_clock::to_time_t(time_point_cast<seconds>(now_ms));
  const auto ms = (now_ms.time_since_epoch() % seconds(1)).count();
  std::tm utc{};
  if (gmtime_r(&now_s, &utc) == nullptr) BLASTER_THROW("gmtime_r failed");
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", utc.tm_year + 1900,
                     utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, ms);
}

void bind_text_or_null(statement& query, int index, std::string_view text) {
  if (text.empty()) {
    query.bind_null(index);
  } else {
    query.bind(index, text);
  }
}

void bind_real_or_null(statement& query, int index, const std::optional<double>& value) {
  if (value) {
    query.bind(index, *value);
  } else {
    query.bind_null(index);
  }
}

void bind_int_or_null(statement& query, int index, const std::optional<std::int64_t>& value) {
  if (value) {
    query.bind(index, *value);
  } else {
    query.bind_null(index);
  }
}

// Rows that hold JSON hold valid JSON: a reader should never meet a half-written document.
void require_json(std::string_view column, std::string_view text) {
  if (!text.empty() && !nlohmann::json::accept(text)) {
    BLASTER_THROW("{}: not valid JSON: {:.80}", column, text);
  }
}

// Runs an INSERT ... RETURNING id to completion and gives the id.
std::int64_t insert_returning_id(statement& insert, std::string_view table) {
  if (!insert.step()) BLASTER_THROW("INSERT INTO {} returned no id", table);
  const std::int64_t id = insert.column_int64(0);
  insert.step();  // Runs the statement to completion, so that the row is written.
  return id;
}

bool is_not_writable(int code) { return code == EACCES || code == EPERM || code == EROFS; }

std::filesystem::path make_home(std::filesystem::path home) {
  check_home_layout(home);
  std::error_code ec;
  std::filesystem::create_directories(home, ec);
  if (ec) {
    if (is_not_writable(ec.value())) {
      BLASTER_INPUT_ERROR("cannot create the blaster home {}: {}; pass a writable --home",
                          home.string(), ec.message());
    }
    BLASTER_THROW("cannot create the blaster home {}: {}", home.string(), ec.message());
  }
  // SQLite writes its WAL and lock files beside the database even for a read.
  if (::access(home.c_str(), W_OK) != 0 && is_not_writable(errno)) {
    BLASTER_INPUT_ERROR(
        "the blaster home {} is not writable ({}); blaster writes there even to read (SQLite's "
        "WAL): fix its permissions, or copy it and pass --home COPY",
        home.string(), std::strerror(errno));
  }
  return home;
}

// A database at version 0 that already holds tables, or one stamped by another program, is not
// ours to migrate: migrating would write blaster's tables into someone else's file.
void reject_foreign_database(database& db) {
  statement application = db.prepare("PRAGMA application_id");
  if (!application.step()) BLASTER_THROW("SQLite: PRAGMA application_id returned no row");
  const std::int64_t id = application.column_int64(0);
  if (id != 0 && id != store_application_id) {
    BLASTER_INPUT_ERROR(
        "{}: not a blaster database (it belongs to another program: application_id {}); move "
        "it away or pick another home",
        db.path().string(), id);
  }
  if (db.user_version() != 0) return;
  statement tables = db.prepare(
      "SELECT group_concat(name, ', ') FROM sqlite_master "
      "WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
  if (tables.step() && !tables.column_is_null(0)) {
    BLASTER_INPUT_ERROR(
        "{}: not a blaster database (it holds tables {} but no blaster schema version); move it "
        "away or pick another home",
        db.path().string(), tables.column_text(0));
  }
}

// "host pid start": a process, as a run's owner. The start time (clock ticks after boot, from
// /proc) tells a live process from a later one that was given the same pid.
std::string process_start_ticks(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The command name, in parentheses, may hold spaces; the fields after it are plain.
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 22) return field;  // starttime, field 22 of proc(5)
  }
  return {};
}

// The host, as a digest: runs travel in bundles, and a machine's name need not.
std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
  return sha256_hex(name).substr(0, 16);
}

std::string this_process() {
  return fmt::format("{} {} {}", host_name(), ::getpid(), process_start_ticks(::getpid()));
}

// Whether the run's owner may still be running it. A process on another host cannot be seen
// from here, so its runs are left as they are.
bool owner_may_be_alive(const std::string& owner) {
  std::istringstream parts(owner);
  std::string host;
  pid_t pid = 0;
  std::string start;
  if (!(parts >> host >> pid >> start)) return false;
  if (host != host_name()) return true;
  return process_start_ticks(pid) == start;
}

// A run left 'running' by a process that is gone was interrupted (killed, crashed, the machine
// lost power): say so, so that nothing reads it as still going or exports it as complete.
void mark_interrupted_runs(database& db) {
  std::vector<std::pair<std::int64_t, std::string>> running;
  statement query = db.prepare("SELECT id, COALESCE(owner, '') FROM runs WHERE status = 'running'");
  while (query.step()) running.emplace_back(query.column_int64(0), query.column_text(1));
  for (const auto& [id, owner] : running) {
    if (owner_may_be_alive(owner)) continue;
    statement update = db.prepare(
        "UPDATE runs SET status = 'interrupted', finished_at = ?2 "
        "WHERE id = ?1 AND status = 'running'");
    update.bind(1, id);
    update.bind(2, utc_now_iso8601());
    update.step();
  }
}

// A database with no schema beside a CAS that holds objects lost its runs (deleted, truncated,
// replaced): starting afresh would reuse run ids that the objects' old rows had.
void reject_lost_database(database& db, const cas_store& cas) {
  if (db.user_version() != 0) return;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(cas.root(), ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec) || !is_sha256_hex(it->path().filename().string())) continue;
    BLASTER_INPUT_ERROR(
        "{}: the database holds no runs, but {} holds the objects of earlier runs: the database "
        "was lost or replaced; restore blaster.db from a backup, or move the home away and "
        "start a new one",
        db.path().string(), cas.root().string());
  }
}

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

}  // namespace

void check_home_layout(const std::filesystem::path& home) {
  // A path that exists as the wrong kind of thing is the user's to fix; it is not a failure of
  // the machine, and reading through it would report an empty store.
  auto kind_mismatch = [](const std::filesystem::path& p, bool want_folder) {
    std::error_code ec;
    const auto status = std::filesystem::status(p, ec);
    if (ec || !std::filesystem::exists(status)) return false;
    return want_folder ? !std::filesystem::is_directory(status)
                       : !std::filesystem::is_regular_file(status);
  };
  if (kind_mismatch(home, true)) {
    BLASTER_INPUT_ERROR(
        "{}: the blaster home is not a folder; pass --home DIR naming a folder (or one that "
        "does not exist yet)",
        home.string());
  }
  if (kind_mismatch(home / "cas", true)) {
    BLASTER_INPUT_ERROR(
        "{}: the object store must be a folder; move the file away or pick another home",
        (home / "cas").string());
  }
  if (kind_mismatch(home / "blaster.db", false)) {
    BLASTER_INPUT_ERROR("{}: the database must be a file; move it away or pick another home",
                        (home / "blaster.db").string());
  }
}

std::filesystem::path resolve_home(const std::optional<std::filesystem::path>& flag) {
  if (flag) {
    if (flag->empty()) BLASTER_INPUT_ERROR("the home folder given is empty; name a folder");
    return *flag;
  }
  if (const char* env = std::getenv("BLASTER_HOME"); env != nullptr && *env != '\0') return env;
  return std::filesystem::path(".") / ".blaster";
}

store::store(std::filesystem::path home)
    : home_(make_home(std::move(home))), cas_(home_ / "cas"), db_(home_ / "blaster.db") {
  reject_foreign_database(db_);
  reject_lost_database(db_, cas_);
  db_.migrate(store_schema());
  mark_interrupted_runs(db_);
}

void store::require_object(std::string_view column, std::string_view digest) const {
  if (digest.empty()) return;
  if (!is_sha256_hex(digest)) BLASTER_THROW("{}: '{}' is not a SHA-256 digest", column, digest);
  if (!cas_.contains(digest)) {
    BLASTER_THROW(
        "{}: object {} is not in the store {}; put its bytes in the CAS before the row that "
        "cites it",
        column, digest, cas_.root().string());
  }
}

std::int64_t store::begin_run(std::string_view command, std::string_view task,
                              std::string_view device_json) {
  // RETURNING reads the id in the same statement, whoever else writes on this connection.
  statement insert = db_.prepare(
      "INSERT INTO runs(started_at, command, task, status, device_json, owner) "
      "VALUES(?1, ?2, ?3, 'running', ?4, ?5) RETURNING id");
  insert.bind(1, utc_now_iso8601());
  insert.bind(2, command);
  bind_text_or_null(insert, 3, task);
  bind_text_or_null(insert, 4, device_json);
  insert.bind(5, this_process());
  if (!insert.step()) BLASTER_THROW("INSERT INTO runs returned no id");
  const std::int64_t run_id = insert.column_int64(0);
  insert.step();  // Runs the statement to completion, so that the row is committed.
  return run_id;
}

void store::add_result(std::int64_t run_id, const result_record& result) {
  require_object("results.source_sha256", result.source_sha256);
  require_object("results.cubin_sha256", result.cubin_sha256);
  require_object("results.samples_sha256", result.samples_sha256);
  statement insert = db_.prepare(
      "INSERT INTO results(run_id, candidate, variant, case_name, status, reason, time_us, "
      "speedup, bandwidth_gbs, roofline_pct, source_sha256, cubin_sha256, samples_sha256, "
      "detail_json) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)");
  insert.bind(1, run_id);
  insert.bind(2, result.candidate);
  insert.bind(3, result.variant);
  bind_text_or_null(insert, 4, result.case_name);
  insert.bind(5, result.status);
  bind_text_or_null(insert, 6, result.reason);
  bind_real_or_null(insert, 7, result.time_us);
  bind_real_or_null(insert, 8, result.speedup);
  bind_real_or_null(insert, 9, result.bandwidth_gbs);
  bind_real_or_null(insert, 10, result.roofline_pct);
  bind_text_or_null(insert, 11, result.source_sha256);
  bind_text_or_null(insert, 12, result.cubin_sha256);
  bind_text_or_null(insert, 13, result.samples_sha256);
  bind_text_or_null(insert, 14, result.detail_json);
  insert.step();
}

void store::finish_run(std::int64_t run_id, std::string_view status,
                       std::string_view report_sha256) {
  require_object("runs.report_sha256", report_sha256);
  statement update = db_.prepare(
      "UPDATE runs SET finished_at = ?1, status = ?2, report_sha256 = ?3 WHERE id = ?4");
  update.bind(1, utc_now_iso8601());
  update.bind(2, status);
  bind_text_or_null(update, 3, report_sha256);
  update.bind(4, run_id);
  update.step();
  if (db_.changes() != 1) BLASTER_THROW("finish_run: no run with id {}", run_id);
}

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

}  // namespace blaster
