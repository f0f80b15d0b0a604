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
#include "evidence/detail/row_binding.hpp"
#include "evidence/store_schema.hpp"

namespace blaster {
namespace {

using detail::bind_text_or_null;

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
      "INSERT INTO runs(id, started_at, command, task, status, device_json, owner) "
      "VALUES(max((SELECT coalesce(max(id), 0) + 1 FROM runs), ?6), ?1, ?2, ?3, 'running', ?4, "
      "?5) RETURNING id");
  insert.bind(1, utc_now_iso8601());
  insert.bind(2, command);
  bind_text_or_null(insert, 3, task);
  bind_text_or_null(insert, 4, device_json);
  insert.bind(5, this_process());
  insert.bind(6, first_run_id_);
  if (!insert.step()) BLASTER_THROW("INSERT INTO runs returned no id");
  const std::int64_t run_id = insert.column_int64(0);
  insert.step();  // Runs the statement to completion, so that the row is committed.
  return run_id;
}

std::int64_t store::last_run_id() {
  statement query = db_.prepare("SELECT coalesce(max(id), 0) FROM runs");
  query.step();
  return query.column_int64(0);
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

void store::reopen_run(std::int64_t run_id) {
  statement update = db_.prepare(
      "UPDATE runs SET status = 'running', finished_at = NULL, report_sha256 = NULL, owner = ?1 "
      "WHERE id = ?2");
  update.bind(1, this_process());
  update.bind(2, run_id);
  update.step();
  if (db_.changes() != 1) BLASTER_THROW("reopen_run: no run with id {}", run_id);
}

}  // namespace blaster
