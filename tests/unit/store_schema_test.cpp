// The store's schema over time: a version 1 database migrates and keeps its rows; a database
// that is not blaster's, or is damaged, or sits in a home blaster cannot write, is refused with
// a message that names it.
#include "evidence/store_schema.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "../store/store_test_support.hpp"
#include "core/error.hpp"
#include "evidence/run_catalog.hpp"
#include "evidence/store.hpp"

namespace blaster {
namespace {

using testing::query_int;
using testing::query_text;
namespace fs = std::filesystem;
using testing::temp_folder;

std::string input_error_of(auto&& call) {
  try {
    call();
  } catch (const input_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no input_error";
  return {};
}

TEST(StoreSchema, VersionsIncreaseAndTheLatestIsThree) {
  const auto steps = store_schema();
  ASSERT_EQ(steps.size(), 3U);
  EXPECT_EQ(steps[0].version, 1);
  EXPECT_EQ(steps[1].version, 2);
  EXPECT_EQ(steps[2].version, 3);
}

TEST(StoreSchema, Version1DatabaseMigratesAndKeepsItsRows) {
  const temp_folder home("v1");
  const std::string digest(64, 'a');
  {
    // Exactly what a blaster of schema version 1 wrote.
    database old(home.path() / "blaster.db");
    old.migrate(store_schema().first(1));
    old.exec(
        "INSERT INTO runs(id, started_at, finished_at, command, task, status, device_json, "
        "report_sha256) VALUES(7, '2025-01-31T12:00:00.000Z', '2025-01-31T12:01:00.000Z', "
        "'blaster bench --task rmsnorm', 'rmsnorm', 'completed', '{\"name\":\"NVIDIA H100\"}', "
        "'" +
        digest + "')");
    old.exec(
        "INSERT INTO results(run_id, candidate, variant, status, time_us, speedup, cubin_sha256) "
        "VALUES(7, 'init', 'init', 'passed', 125.5, 1.0, '" +
        digest + "')");
    ASSERT_EQ(old.user_version(), 1);
  }

  store s(home.path());
  EXPECT_EQ(s.db().user_version(), 3);
  EXPECT_EQ(query_int(s.db(), "PRAGMA application_id"), store_application_id);
  EXPECT_EQ(query_int(s.db(), "SELECT count(*) FROM runs"), 1);
  EXPECT_EQ(query_text(s.db(), "SELECT report_sha256 FROM runs WHERE id = 7"), digest);
  EXPECT_EQ(query_text(s.db(), "SELECT device_id IS NULL AND task_id IS NULL FROM runs"), "1");
  EXPECT_EQ(query_text(s.db(), "SELECT time_us FROM results WHERE run_id = 7"), "125.5");
  for (const char* table :
       {"device_fingerprints", "tasks", "task_cases", "sources", "compilations", "compiled_kernels",
        "gate_results", "measurements", "verdicts", "artifacts"}) {
    EXPECT_EQ(query_int(s.db(), std::string("SELECT count(*) FROM ") + table), 0) << table;
  }
  // The old run reads like a new one; its device comes from device_json.
  const auto runs = run_catalog(s).runs({});
  ASSERT_EQ(runs.size(), 1U);
  EXPECT_EQ(runs[0].run.id, 7);
  EXPECT_EQ(runs[0].device_name, "NVIDIA H100");
  EXPECT_EQ(runs[0].passed, 1);
  // New runs go on after the old ones.
  EXPECT_EQ(s.begin_run("blaster bench", "rmsnorm", ""), 8);
}

TEST(StoreSchema, NewerDatabaseIsRefused) {
  const temp_folder home("newer");
  { database(home.path() / "blaster.db").exec("PRAGMA user_version = 99"); }
  EXPECT_NE(input_error_of([&] { store s(home.path()); }).find("newer than this blaster knows"),
            std::string::npos);
}

TEST(StoreSchema, ForeignDatabasesAreRefusedAndLeftAlone) {
  const temp_folder home("foreign");
  const fs::path db_path = home.path() / "blaster.db";
  {
    database other(db_path);
    other.exec("CREATE TABLE recipes(name TEXT); INSERT INTO recipes VALUES('bread')");
  }
  std::string message = input_error_of([&] { store s(home.path()); });
  EXPECT_NE(message.find(db_path.string() + ": not a blaster database"), std::string::npos)
      << message;
  EXPECT_NE(message.find("recipes"), std::string::npos) << message;
  {
    database other(db_path);
    EXPECT_EQ(query_int(other, "SELECT count(*) FROM sqlite_master WHERE name = 'runs'"), 0)
        << "blaster wrote its tables into someone else's database";
    other.exec("DROP TABLE recipes; PRAGMA application_id = 1234");
  }
  message = input_error_of([&] { store s(home.path()); });
  EXPECT_NE(message.find("application_id 1234"), std::string::npos) << message;

  fs::remove(db_path);
  std::ofstream(db_path) << "not SQLite at all, just text long enough to be a header......\n";
  message = input_error_of([&] { store s(home.path()); });
  EXPECT_NE(message.find(db_path.string() + ": not a blaster database"), std::string::npos)
      << message;
}

TEST(StoreSchema, DamagedDatabaseIsAnInputErrorNamingTheFile) {
  const temp_folder home("damaged");
  const fs::path db_path = home.path() / "blaster.db";
  {
    store s(home.path());
    const std::int64_t run = s.begin_run("blaster bench", "t", "");
    for (int i = 0; i < 300; ++i) {
      s.add_result(run, result_record{.candidate = "c",
                                      .variant = std::to_string(i),
                                      .status = "passed",
                                      .detail_json = std::string(1000, 'x')});
    }
  }  // The last connection checkpoints the WAL into the file.
  const auto size_bytes = fs::file_size(db_path);
  ASSERT_GT(size_bytes, 100000U);
  {
    // Garbage over the second half: the pages of the results table.
    std::fstream file(db_path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(size_bytes / 2));
    const std::string garbage(size_bytes / 4, '\xab');
    file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  const std::string message = input_error_of([&] {
    store s(home.path());
    run_catalog catalog(s);
    static_cast<void>(catalog.results_of(1));
    static_cast<void>(catalog.runs({}));
  });
  EXPECT_NE(message.find(db_path.string()), std::string::npos) << message;
  EXPECT_TRUE(message.find("damaged") != std::string::npos ||
              message.find("not a blaster database") != std::string::npos)
      << message;
}

TEST(StoreSchema, ReadOnlyHomeIsAnInputError) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes through any permission bits";
  const temp_folder dir("readonly");
  const fs::path home = dir.path() / "home";
  { store s(home); }
  fs::permissions(home, fs::perms::owner_read | fs::perms::owner_exec);
  std::string message = input_error_of([&] { store s(home); });
  EXPECT_NE(message.find(home.string() + " is not writable"), std::string::npos) << message;

  fs::permissions(dir.path(), fs::perms::owner_read | fs::perms::owner_exec);
  message = input_error_of([&] { store s(dir.path() / "new_home"); });
  EXPECT_NE(message.find("cannot create the blaster home"), std::string::npos) << message;
  fs::permissions(dir.path(), fs::perms::owner_all);
  fs::permissions(home, fs::perms::owner_all);
}

}  // namespace
}  // namespace blaster
