#include "evidence/database.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;

class Database : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           ("blaster-db-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = dir_ / "test.db";
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::int64_t count(database& db, std::string_view table) {
    statement query = db.prepare("SELECT count(*) FROM " + std::string(table));
    EXPECT_TRUE(query.step());
    return query.column_int64(0);
  }

  static std::string text_of(database& db, std::string_view sql) {
    statement query = db.prepare(sql);
    EXPECT_TRUE(query.step()) << sql;
    return query.column_text(0);
  }

  fs::path dir_;
  fs::path path_;
};

constexpr migration version_1{1, "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT NOT NULL);"};
constexpr migration version_2{
    2, "ALTER TABLE notes ADD COLUMN author TEXT; CREATE TABLE tags(name TEXT NOT NULL);"};

TEST_F(Database, OpensInWalModeWithForeignKeysOn) {
  database db(path_);
  EXPECT_TRUE(fs::exists(path_));
  EXPECT_EQ(text_of(db, "PRAGMA journal_mode"), "wal");
  statement foreign_keys = db.prepare("PRAGMA foreign_keys");
  ASSERT_TRUE(foreign_keys.step());
  EXPECT_EQ(foreign_keys.column_int64(0), 1);
  EXPECT_EQ(db.user_version(), 0);
}

TEST_F(Database, MigrationsApplyOnceAndKeepRowsWhenALaterOneIsAdded) {
  {
    database db(path_);
    const migration first[] = {version_1};
    db.migrate(first);
    EXPECT_EQ(db.user_version(), 1);
    db.exec("INSERT INTO notes(body) VALUES('kept')");
    // Applying version 1 again would fail: CREATE TABLE of an existing table.
    db.migrate(first);
  }
  database db(path_);
  const migration both[] = {version_1, version_2};
  db.migrate(both);
  EXPECT_EQ(db.user_version(), 2);
  db.migrate(both);
  EXPECT_EQ(db.user_version(), 2);
  EXPECT_EQ(count(db, "notes"), 1);
  EXPECT_EQ(text_of(db, "SELECT body FROM notes"), "kept");
  statement author = db.prepare("SELECT author FROM notes");
  ASSERT_TRUE(author.step());
  EXPECT_TRUE(author.column_is_null(0));
  EXPECT_EQ(count(db, "tags"), 0);
}

TEST_F(Database, FailingMigrationLeavesNoTraceAndKeepsTheVersion) {
  database db(path_);
  const migration first[] = {version_1};
  db.migrate(first);
  const migration broken[] = {
      version_1, {2, "CREATE TABLE half(x INTEGER); INSERT INTO no_such_table VALUES(1);"}};
  EXPECT_THROW(db.migrate(broken), error);
  EXPECT_EQ(db.user_version(), 1);
  statement half = db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'half'");
  ASSERT_TRUE(half.step());
  EXPECT_EQ(half.column_int64(0), 0);
}

TEST_F(Database, MigrationsOutOfOrderAreRefused) {
  database db(path_);
  const migration reversed[] = {version_2, version_1};
  EXPECT_THROW(db.migrate(reversed), error);
  EXPECT_EQ(db.user_version(), 0);
}

TEST_F(Database, NewerSchemaThanKnownIsAnInputError) {
  database db(path_);
  db.exec("PRAGMA user_version = 7");
  const migration first[] = {version_1};
  EXPECT_THROW(db.migrate(first), input_error);
}

TEST_F(Database, TransactionRollsBackOnException) {
  database db(path_);
  const migration first[] = {version_1};
  db.migrate(first);
  try {
    transaction guard(db);
    db.exec("INSERT INTO notes(body) VALUES('lost')");
    throw std::runtime_error("step failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(count(db, "notes"), 0);

  {
    transaction guard(db);
    db.exec("INSERT INTO notes(body) VALUES('kept')");
    guard.commit();
  }
  EXPECT_EQ(count(db, "notes"), 1);
  // A second connection sees the committed row: it reached the file, not just this connection.
  database other(path_);
  EXPECT_EQ(count(other, "notes"), 1);
}

TEST_F(Database, ForeignFileIsAnInputErrorNamingThePath) {
  {
    std::ofstream out(path_, std::ios::binary);
    for (int i = 0; i < 200; ++i) out << "this is a text file, not a database\n";
  }
  try {
    database db(path_);
    FAIL() << "a text file opened as a database";
  } catch (const input_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path_.string() + ": not a blaster database ("), std::string::npos)
        << message;
  }
}

TEST_F(Database, CorruptedHeaderIsAnInputError) {
  {
    database db(path_);
    db.exec("CREATE TABLE t(x); INSERT INTO t VALUES(1);");
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  }
  fs::remove(fs::path(path_.string() + "-wal"));
  fs::remove(fs::path(path_.string() + "-shm"));
  {
    std::fstream file(path_, std::ios::binary | std::ios::in | std::ios::out);
    file.seekp(0);
    file << "garbage garbage!";  // The 16-byte magic "SQLite format 3\0".
  }
  EXPECT_THROW(database{path_}, input_error);
}

TEST_F(Database, ForeignKeysAreEnforced) {
  database db(path_);
  db.exec(
      "CREATE TABLE parent(id INTEGER PRIMARY KEY);"
      "CREATE TABLE child(id INTEGER PRIMARY KEY, parent_id INTEGER NOT NULL REFERENCES "
      "parent(id));");
  db.exec("INSERT INTO parent(id) VALUES(1)");
  db.exec("INSERT INTO child(parent_id) VALUES(1)");
  EXPECT_THROW(db.exec("INSERT INTO child(parent_id) VALUES(2)"), error);
  statement insert = db.prepare("INSERT INTO child(parent_id) VALUES(?1)");
  insert.bind(1, std::int64_t{3});
  EXPECT_THROW(insert.step(), error);
  EXPECT_EQ(count(db, "child"), 1);
}

TEST_F(Database, StatementBindsAndReadsEveryType) {
  database db(path_);
  db.exec("CREATE TABLE v(i INTEGER, r REAL, t TEXT, n TEXT)");
  statement insert = db.prepare("INSERT INTO v VALUES(?1, ?2, ?3, ?4)");
  const std::string text_with_nul("a\0b", 3);
  insert.bind(1, std::int64_t{1} << 40);
  insert.bind(2, 2.5);
  insert.bind(3, std::string_view(text_with_nul));
  insert.bind_null(4);
  EXPECT_FALSE(insert.step());
  EXPECT_EQ(db.last_insert_rowid(), 1);

  insert.reset();
  insert.bind(1, 7);
  EXPECT_FALSE(insert.step());  // reset() unbound the rest: NULLs.
  EXPECT_EQ(db.last_insert_rowid(), 2);

  statement query = db.prepare("SELECT i, r, t, n FROM v ORDER BY rowid");
  ASSERT_TRUE(query.step());
  EXPECT_EQ(query.column_int64(0), std::int64_t{1} << 40);
  EXPECT_DOUBLE_EQ(query.column_double(1), 2.5);
  EXPECT_EQ(query.column_text(2), text_with_nul);
  EXPECT_TRUE(query.column_is_null(3));
  EXPECT_FALSE(query.column_is_null(2));
  ASSERT_TRUE(query.step());
  EXPECT_EQ(query.column_int64(0), 7);
  EXPECT_TRUE(query.column_is_null(1));
  EXPECT_EQ(query.column_text(2), "");
  EXPECT_FALSE(query.step());
}

TEST_F(Database, ErrorsCarryTheMessageAndTheSql) {
  database db(path_);
  try {
    db.prepare("SELECT * FROM missing_table");
    FAIL() << "prepared a query on a missing table";
  } catch (const error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("no such table: missing_table"), std::string::npos) << message;
    EXPECT_NE(message.find("SELECT * FROM missing_table"), std::string::npos) << message;
  }
  EXPECT_THROW(db.prepare("SELECT 1; SELECT 2"), error);
}

// A writer that waited out the busy timeout behind another's lock says which file and what to do,
// not SQLite's words and the SQL it was running.
TEST_F(Database, ALockHeldPastTheTimeoutNamesTheFileAndTheRemedy) {
  database holder(path_);
  holder.exec("CREATE TABLE t(x)");
  holder.exec("BEGIN IMMEDIATE");
  database waiter(path_);
  try {
    transaction guard(waiter);
    FAIL() << "took the write lock another connection holds";
  } catch (const error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(path_.string() + ": the database is locked", 0), 0U) << message;
    EXPECT_NE(message.find("another blaster using this home"), std::string::npos) << message;
    EXPECT_NE(message.find("--home DIR"), std::string::npos) << message;
    EXPECT_EQ(message.find("BEGIN"), std::string::npos) << message;
  }
  holder.exec("COMMIT");
}

// SQLite says "disk I/O error" when a write meets the file size limit (and "database or disk is
// full" on a full disk): the message names the database and what to do instead.
TEST_F(Database, AWriteBeyondTheFileSizeLimitNamesTheFileAndTheRemedy) {
  {
    database db(path_);
    db.exec("CREATE TABLE t(x BLOB)");
  }
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int code = 0;
    ::signal(SIGXFSZ, SIG_IGN);  // blaster's main ignores it too: the write fails with EFBIG
    const rlimit limit{256 << 10, 256 << 10};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(10);
    try {
      database db(path_);
      statement insert = db.prepare("INSERT INTO t VALUES(zeroblob(4 << 20))");
      insert.step();
      code = 11;
    } catch (const error& e) {
      const std::string message = e.what();
      if (message.rfind(path_.string() + ": cannot write the database: File too large", 0) != 0 ||
          message.find("ulimit -f") == std::string::npos ||
          message.find("INSERT") != std::string::npos) {
        std::fprintf(stderr, "message: %s\n", e.what());
        code = 12;
      }
    }
    std::fflush(stderr);
    ::_exit(code);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "see the child's message on stderr";
}

TEST_F(Database, MovedDatabaseKeepsWorking) {
  database first(path_);
  first.exec("CREATE TABLE t(x)");
  database second(std::move(first));
  second.exec("INSERT INTO t VALUES(1)");
  EXPECT_EQ(count(second, "t"), 1);
}

}  // namespace
}  // namespace blaster
