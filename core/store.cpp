#include "core/store.hpp"

#include <array>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <system_error>
#include <utility>

#include "core/error.hpp"
#include "core/sha256.hpp"

namespace blaster {
namespace {

// The schema, one step per version. Append new versions; never edit an applied one.
constexpr std::array schema_migrations{
    migration{1, R"sql(
CREATE TABLE runs(
  id INTEGER PRIMARY KEY,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  command TEXT NOT NULL,
  task TEXT,
  status TEXT NOT NULL,
  device_json TEXT,
  report_sha256 TEXT
);
CREATE TABLE results(
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  candidate TEXT NOT NULL,
  variant TEXT NOT NULL,
  case_name TEXT,
  status TEXT NOT NULL,
  reason TEXT,
  time_us REAL,
  speedup REAL,
  bandwidth_gbs REAL,
  roofline_pct REAL,
  source_sha256 TEXT,
  cubin_sha256 TEXT,
  samples_sha256 TEXT,
  detail_json TEXT
);
CREATE INDEX results_run_id ON results(run_id);
)sql"},
};

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

void bind_digest_or_null(statement& query, int index, std::string_view column,
                         std::string_view digest) {
  if (!digest.empty() && !is_sha256_hex(digest)) {
    BLASTER_THROW("results.{}: '{}' is not a SHA-256 digest", column, digest);
  }
  bind_text_or_null(query, index, digest);
}

std::filesystem::path make_home(std::filesystem::path home) {
  std::error_code ec;
  std::filesystem::create_directories(home, ec);
  if (ec) BLASTER_THROW("cannot create the blaster home {}: {}", home.string(), ec.message());
  return home;
}

}  // namespace

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
  db_.migrate(schema_migrations);
}

std::int64_t store::begin_run(std::string_view command, std::string_view task,
                              std::string_view device_json) {
  // RETURNING reads the id in the same statement, whoever else writes on this connection.
  statement insert = db_.prepare(
      "INSERT INTO runs(started_at, command, task, status, device_json) "
      "VALUES(?1, ?2, ?3, 'running', ?4) RETURNING id");
  insert.bind(1, utc_now_iso8601());
  insert.bind(2, command);
  bind_text_or_null(insert, 3, task);
  bind_text_or_null(insert, 4, device_json);
  if (!insert.step()) BLASTER_THROW("INSERT INTO runs returned no id");
  const std::int64_t run_id = insert.column_int64(0);
  insert.step();  // Runs the statement to completion, so that the row is committed.
  return run_id;
}

void store::add_result(std::int64_t run_id, const result_record& result) {
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
  bind_digest_or_null(insert, 11, "source_sha256", result.source_sha256);
  bind_digest_or_null(insert, 12, "cubin_sha256", result.cubin_sha256);
  bind_digest_or_null(insert, 13, "samples_sha256", result.samples_sha256);
  bind_text_or_null(insert, 14, result.detail_json);
  insert.step();
}

void store::finish_run(std::int64_t run_id, std::string_view status,
                       std::string_view report_sha256) {
  if (!report_sha256.empty() && !is_sha256_hex(report_sha256)) {
    BLASTER_THROW("runs.report_sha256: '{}' is not a SHA-256 digest", report_sha256);
  }
  statement update = db_.prepare(
      "UPDATE runs SET finished_at = ?1, status = ?2, report_sha256 = ?3 WHERE id = ?4");
  update.bind(1, utc_now_iso8601());
  update.bind(2, status);
  bind_text_or_null(update, 3, report_sha256);
  update.bind(4, run_id);
  update.step();
  if (db_.changes() != 1) BLASTER_THROW("finish_run: no run with id {}", run_id);
}

}  // namespace blaster
