#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

// SQLite's handles, declared here so that the header needs no SQLite include.
struct sqlite3;
struct sqlite3_stmt;

namespace blaster {

// One schema step: applied once, when PRAGMA user_version is below `version`.
struct migration {
  int version;
  std::string_view sql;
};

// A prepared SQL statement. Parameters are bound by 1-based index, columns read by 0-based index
// (SQLite's own conventions).
class statement {
 public:
  ~statement();
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;
  statement(statement&& other) noexcept;
  statement& operator=(statement&& other) noexcept;

  void bind(int index, std::int64_t value);
  // Without it, bind(i, 42) would be ambiguous between the int64 and double overloads.
  void bind(int index, int value) { bind(index, std::int64_t{value}); }
  void bind(int index, double value);
  void bind(int index, std::string_view value);  // Copied: the view may die before step().
  void bind_null(int index);

  // Runs to the next row: true when a row is ready to read, false when the statement is done.
  bool step();

  std::int64_t column_int64(int column) const;
  double column_double(int column) const;
  std::string column_text(int column) const;  // "" for NULL.
  bool column_is_null(int column) const;

  // The columns of the result, to read rows whose shape the caller does not know.
  enum class value_kind { integer, real, text, blob, null };
  int column_count() const;
  std::string column_name(int column) const;
  value_kind column_kind(int column) const;  // of the current row

  // Makes the statement ready to run again, with all parameters unbound.
  void reset();

 private:
  friend class database;
  statement(sqlite3* db, std::string_view sql);  // Made by database::prepare.
  [[noreturn]] void fail(std::string_view call) const;

  sqlite3* db_ = nullptr;
  sqlite3_stmt* handle_ = nullptr;
  std::string sql_;
};

// An open SQLite database file, in WAL mode with foreign keys enforced. A foreign or corrupted
// file throws blaster::input_error "<path>: not a blaster database (...)", at open or, for damage
// deeper in the file, at the statement that meets it.
class database {
 public:
  explicit database(const std::filesystem::path& path);
  ~database();
  database(const database&) = delete;
  database& operator=(const database&) = delete;
  database(database&& other) noexcept;
  database& operator=(database&& other) noexcept;

  void exec(std::string_view sql);
  statement prepare(std::string_view sql);
  std::int64_t last_insert_rowid() const;
  // Rows changed by the last INSERT, UPDATE or DELETE on this connection.
  int changes() const;
  int user_version();

  // Applies, each in its own transaction, every step above user_version, in order, and records
  // its version. Steps must have strictly increasing versions. A database already at a version
  // above the last step (written by a newer blaster) throws blaster::input_error.
  void migrate(std::span<const migration> steps);

  const std::filesystem::path& path() const { return path_; }

 private:
  friend class transaction;
  [[noreturn]] void fail(std::string_view sql) const;

  std::filesystem::path path_;
  sqlite3* handle_ = nullptr;
};

// BEGIN IMMEDIATE now (so that a writer waits for the lock here, not at its first write);
// ROLLBACK at scope exit unless commit() succeeded.
class transaction {
 public:
  explicit transaction(database& db);
  ~transaction();
  transaction(const transaction&) = delete;
  transaction& operator=(const transaction&) = delete;

  void commit();

 private:
  database& db_;
  bool committed_ = false;
};

}  // namespace blaster
