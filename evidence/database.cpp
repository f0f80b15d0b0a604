#include "evidence/database.hpp"

#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>

#include "core/error.hpp"
#include "core/file_io.hpp"

namespace blaster {
namespace {

// The busy handler waits this long for another connection's lock before SQLITE_BUSY.
constexpr int busy_timeout_ms = 10000;

bool is_foreign_file(int code) {
  const int primary = code & 0xff;
  return primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT;
}

// The size of the largest of the database's files: the database, its WAL and its shared memory.
std::uint64_t largest_file_bytes(std::string_view file) {
  std::uint64_t largest = 0;
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::error_code ignored;
    const auto bytes = std::filesystem::file_size(std::string(file) + suffix, ignored);
    if (!ignored) largest = std::max<std::uint64_t>(largest, bytes);
  }
  return largest;
}

// What a failed call means where the user can act on it, in place of SQLite's words and the SQL:
// another process held the write lock past the busy timeout, or the disk or the file size limit
// took no more bytes (SQLite says "disk I/O error" for the limit). Empty for anything else.
std::string remedy(sqlite3* db, std::string_view file) {
  const int primary = sqlite3_errcode(db) & 0xff;
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED) {
    return fmt::format(
        "{}: the database is locked: another process has been writing it for {} s (another "
        "blaster using this home?); run this again once that one is done, or give this command "
        "a home of its own (--home DIR)",
        file, busy_timeout_ms / 1000);
  }
  if (primary != SQLITE_FULL && primary != SQLITE_IOERR) return {};
  // SQLite keeps the errno only now and then (a write that stops short at the limit is
  // SQLITE_FULL with none, one that fails outright SQLITE_IOERR_WRITE with none): where it has
  // none, the file size limit or the free space on the disk says which it was.
  int code = sqlite3_system_errno(db);
  if (code != ENOSPC && code != EDQUOT && code != EFBIG) {
    rlimit size_limit{};
    struct statvfs disk {};
    const std::filesystem::path folder = std::filesystem::path(file).parent_path();
    if (::getrlimit(RLIMIT_FSIZE, &size_limit) == 0 && size_limit.rlim_cur != RLIM_INFINITY &&
        largest_file_bytes(file) + (std::uint64_t{1} << 20) >= size_limit.rlim_cur) {
      code = EFBIG;
    } else if (primary == SQLITE_FULL ||
               (::statvfs(folder.empty() ? "." : folder.c_str(), &disk) == 0 &&
                disk.f_bavail * disk.f_frsize < (std::uint64_t{1} << 20))) {
      code = ENOSPC;
    } else {
      return {};
    }
  }
  return fmt::format("{}: cannot write the database: {}", file, write_failure(code));
}

// Switching to WAL needs an exclusive lock, and SQLite answers SQLITE_BUSY at once, without its
// busy handler, when another connection opens a fresh file at the same moment: retry here.
void enable_wal(sqlite3* db, const std::filesystem::path& path) {
  const char* sql = "PRAGMA journal_mode=WAL";
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_timeout_ms);
  for (;;) {
    // A file system without shared memory answers with the old mode; that still works, with
    // readers and writers blocking each other, so it is not an error.
    const int code = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
    if (code == SQLITE_OK) return;
    const int primary = code & 0xff;
    if ((primary != SQLITE_BUSY && primary != SQLITE_LOCKED) ||
        std::chrono::steady_clock::now() > deadline) {
      if (const std::string m = remedy(db, path.string()); !m.empty()) BLASTER_THROW("{}", m);
      BLASTER_THROW("SQLite error in {}: {} (in: {})", path.string(), sqlite3_errmsg(db), sql);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

// --- statement ---------------------------------------------------------------------------------

statement::statement(sqlite3* db, std::string_view sql) : db_(db), sql_(sql) {
  const char* tail = nullptr;
  if (sqlite3_prepare_v2(db_, sql_.data(), static_cast<int>(sql_.size()), &handle_, &tail) !=
      SQLITE_OK) {
    fail("sqlite3_prepare_v2");
  }
  if (handle_ == nullptr) BLASTER_THROW("SQLite: no statement to prepare in: {}", sql_);
  // prepare compiles only the first statement; a second one would be silently ignored.
  for (const char* c = tail; c != nullptr && *c != '\0'; ++c) {
    if (*c != ' ' && *c != '\n' && *c != '\t' && *c != '\r' && *c != ';') {
      sqlite3_finalize(handle_);
      BLASTER_THROW("SQLite: prepare takes one statement; found more in: {}", sql_);
    }
  }
}

statement::~statement() { sqlite3_finalize(handle_); }

statement::statement(statement&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      handle_(std::exchange(other.handle_, nullptr)),
      sql_(std::move(other.sql_)) {}

statement& statement::operator=(statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(handle_);
    db_ = std::exchange(other.db_, nullptr);
    handle_ = std::exchange(other.handle_, nullptr);
    sql_ = std::move(other.sql_);
  }
  return *this;
}

void statement::fail(std::string_view call) const {
  // Damage found after open is the same bad input as a foreign file found at open.
  if (is_foreign_file(sqlite3_errcode(db_))) {
    const char* file = sqlite3_db_filename(db_, "main");
    BLASTER_INPUT_ERROR(
        "{}: the database is damaged ({}); move it away and restore a copy, or pick another "
        "home (in: {})",
        file != nullptr ? file : "the database", sqlite3_errmsg(db_), sql_);
  }
  const char* file = sqlite3_db_filename(db_, "main");
  if (const std::string m = remedy(db_, file != nullptr ? file : "the database"); !m.empty()) {
    BLASTER_THROW("{}", m);
  }
  BLASTER_THROW("SQLite {} failed: {} (in: {})", call, sqlite3_errmsg(db_), sql_);
}

void statement::bind(int index, std::int64_t value) {
  if (sqlite3_bind_int64(handle_, index, value) != SQLITE_OK) fail("sqlite3_bind_int64");
}

void statement::bind(int index, double value) {
  if (sqlite3_bind_double(handle_, index, value) != SQLITE_OK) fail("sqlite3_bind_double");
}

void statement::bind(int index, std::string_view value) {
  if (sqlite3_bind_text64(handle_, index, value.data(), value.size(), SQLITE_TRANSIENT,
                          SQLITE_UTF8) != SQLITE_OK) {
    fail("sqlite3_bind_text64");
  }
}

void statement::bind_null(int index) {
  if (sqlite3_bind_null(handle_, index) != SQLITE_OK) fail("sqlite3_bind_null");
}

bool statement::step() {
  const int code = sqlite3_step(handle_);
  if (code == SQLITE_ROW) return true;
  if (code == SQLITE_DONE) return false;
  fail("sqlite3_step");
}

std::int64_t statement::column_int64(int column) const {
  return sqlite3_column_int64(handle_, column);
}

double statement::column_double(int column) const { return sqlite3_column_double(handle_, column); }

std::string statement::column_text(int column) const {
  const unsigned char* text = sqlite3_column_text(handle_, column);
  if (text == nullptr) return {};
  // Length after the text call: the conversion to text may change it.
  const int size_bytes = sqlite3_column_bytes(handle_, column);
  return std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(size_bytes));
}

bool statement::column_is_null(int column) const {
  return sqlite3_column_type(handle_, column) == SQLITE_NULL;
}

int statement::column_count() const { return sqlite3_column_count(handle_); }

std::string statement::column_name(int column) const {
  const char* name = sqlite3_column_name(handle_, column);
  if (name == nullptr) BLASTER_THROW("SQLite: no name for column {} (in: {})", column, sql_);
  return name;
}

statement::value_kind statement::column_kind(int column) const {
  switch (sqlite3_column_type(handle_, column)) {
    case SQLITE_INTEGER:
      return value_kind::integer;
    case SQLITE_FLOAT:
      return value_kind::real;
    case SQLITE_TEXT:
      return value_kind::text;
    case SQLITE_BLOB:
      return value_kind::blob;
    default:
      return value_kind::null;
  }
}

void statement::reset() {
  // sqlite3_reset repeats the last step's error, which step() has already thrown.
  sqlite3_reset(handle_);
  sqlite3_clear_bindings(handle_);
}

// --- database ----------------------------------------------------------------------------------

database::database(const std::filesystem::path& path) : path_(path) {
  const int open_code =
      sqlite3_open_v2(path_.c_str(), &handle_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (open_code != SQLITE_OK) {
    const std::string message =
        handle_ != nullptr ? sqlite3_errmsg(handle_) : sqlite3_errstr(open_code);
    sqlite3_close_v2(handle_);
    handle_ = nullptr;
    BLASTER_THROW("SQLite cannot open {}: {}", path_.string(), message);
  }
  sqlite3_extended_result_codes(handle_, 1);
  sqlite3_busy_timeout(handle_, busy_timeout_ms);
  // SQLite reads the file lazily: reading the schema is what tells a foreign file apart.
  const char* probe = "SELECT count(*) FROM sqlite_master";
  if (sqlite3_exec(handle_, probe, nullptr, nullptr, nullptr) != SQLITE_OK) {
    const int code = sqlite3_errcode(handle_);
    const std::string message = sqlite3_errmsg(handle_);
    const std::string what_to_do = remedy(handle_, path_.string());
    sqlite3_close_v2(handle_);
    handle_ = nullptr;
    if (is_foreign_file(code)) {
      BLASTER_INPUT_ERROR("{}: not a blaster database ({}); move it away or pick another home",
                          path_.string(), message);
    }
    if (!what_to_do.empty()) BLASTER_THROW("{}", what_to_do);
    BLASTER_THROW("SQLite cannot read {}: {} (in: {})", path_.string(), message, probe);
  }
  enable_wal(handle_, path_);
  exec("PRAGMA foreign_keys=ON");
}

database::~database() { sqlite3_close_v2(handle_); }

database::database(database&& other) noexcept
    : path_(std::move(other.path_)), handle_(std::exchange(other.handle_, nullptr)) {}

database& database::operator=(database&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(handle_);
    path_ = std::move(other.path_);
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

void database::fail(std::string_view sql) const {
  if (is_foreign_file(sqlite3_errcode(handle_))) {
    BLASTER_INPUT_ERROR(
        "{}: the database is damaged ({}); move it away and restore a copy, or pick another "
        "home (in: {})",
        path_.string(), sqlite3_errmsg(handle_), sql);
  }
  if (const std::string m = remedy(handle_, path_.string()); !m.empty()) BLASTER_THROW("{}", m);
  BLASTER_THROW("SQLite error in {}: {} (in: {})", path_.string(), sqlite3_errmsg(handle_), sql);
}

void database::exec(std::string_view sql) {
  const std::string text(sql);  // sqlite3_exec wants a terminated string.
  if (sqlite3_exec(handle_, text.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) fail(sql);
}

statement database::prepare(std::string_view sql) { return statement(handle_, sql); }

std::int64_t database::last_insert_rowid() const { return sqlite3_last_insert_rowid(handle_); }

int database::changes() const { return sqlite3_changes(handle_); }

int database::user_version() {
  statement query = prepare("PRAGMA user_version");
  if (!query.step()) BLASTER_THROW("SQLite: PRAGMA user_version returned no row");
  return static_cast<int>(query.column_int64(0));
}

void database::migrate(std::span<const migration> steps) {
  for (std::size_t i = 1; i < steps.size(); ++i) {
    if (steps[i].version <= steps[i - 1].version) {
      BLASTER_THROW("schema migrations out of order: version {} follows version {}",
                    steps[i].version, steps[i - 1].version);
    }
  }
  const int latest_version = steps.empty() ? 0 : steps.back().version;
  const int current_version = user_version();
  if (current_version > latest_version) {
    BLASTER_INPUT_ERROR(
        "{}: schema version {} is newer than this blaster knows ({}); use a newer "
        "blaster or another home",
        path_.string(), current_version, latest_version);
  }
  for (const migration& step : steps) {
    if (step.version <= current_version) continue;
    transaction guard(*this);
    // Read again under the write lock: another process may have applied this step meanwhile.
    if (user_version() >= step.version) continue;
    exec(step.sql);
    exec("PRAGMA user_version = " + std::to_string(step.version));
    guard.commit();
  }
}

// --- transaction -------------------------------------------------------------------------------

transaction::transaction(database& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

transaction::~transaction() {
  // No throw from a destructor; a failed ROLLBACK leaves SQLite to roll back on close.
  if (!committed_) sqlite3_exec(db_.handle_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void transaction::commit() {
  db_.exec("COMMIT");
  committed_ = true;
}

}  // namespace blaster
