// The store's schema over time: a version 1 database migrates and keeps its rows; a database
// that is not blaster's, or is damaged, or sits in a home blaster cannot write, is refused with
// a message that names it.
#include "evidence/store_schema.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include <fmt/format.h>

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

TEST(StoreSchema, VersionsIncreaseAndTheLatestIsNine) {
  const auto steps = store_schema();
  ASSERT_EQ(steps.size(), 9U);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ(steps[i].version, static_cast<int>(i) + 1);
  }
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
  EXPECT_EQ(s.db().user_version(), 9);
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

// A store of schema version 3, written as the release before the one-record schema wrote
// it: a results row per variant beside the fuller record. Migrated, the results view gives
// every row back with every value, and the variant rows cite the compilation and measurement.
TEST(StoreSchema, Version3DatabaseMigratesAndTheResultsViewKeepsEveryRow) {
  const temp_folder home("v3");
  const std::string source(64, 's');
  const std::string cubin(64, 'c');
  const std::string samples(64, 'd');
  const std::string other(64, 'e');
  constexpr const char* columns =
      "id, run_id, candidate, variant, case_name, status, reason, time_us, speedup, "
      "bandwidth_gbs, {}, source_sha256, cubin_sha256, samples_sha256, detail_json";
  auto rows_of = [&](database& db, const char* pct) {
    statement q = db.prepare(fmt::format(fmt::runtime(std::string("SELECT ") + columns +
                                                      " FROM results ORDER BY id"),
                                         pct));
    std::vector<std::vector<std::string>> out;
    while (q.step()) {
      std::vector<std::string> row;
      for (int c = 0; c < q.column_count(); ++c) {
        row.push_back(q.column_is_null(c) ? "NULL" : q.column_text(c));
      }
      out.push_back(std::move(row));
    }
    return out;
  };
  std::vector<std::vector<std::string>> before;
  {
    database old(home.path() / "blaster.db");
    old.migrate(store_schema().first(3));
    old.exec(
        "INSERT INTO runs(id, started_at, finished_at, command, task, status, owner) VALUES(3, "
        "'2026-11-30T10:00:00.000Z', '2026-11-30T10:01:00.000Z', 'blaster bench --task relu', "
        "'relu', 'completed', 'h 1 2')");
    old.exec("INSERT INTO sources(id, sha256, file_name, size_bytes) VALUES(1, '" + source +
             "', 'relu_vec.cu', 100)");
    old.exec(
        "INSERT INTO compilations(id, run_id, source_id, candidate, variant, arch, options_json, "
        "succeeded, cubin_sha256) VALUES(1, 3, 1, 'relu_vec', 'relu_vec[BLOCK=128]', 'sm_90a', "
        "'[]', 1, '" +
        cubin + "')");
    old.exec(
        "INSERT INTO measurements(id, compilation_id, case_name, mode, protocol_json, "
        "samples_sha256, sample_count, median_us) VALUES(1, 1, 'canonical', 'hot', '{}', '" +
        samples + "', 10, 1.10)");
    // A timed candidate citing what its compilation and measurement cite; a rejected one timed
    // before it was rejected (impossible_speed) whose samples no measurement cites; a file refused
    // before it compiled.
    old.exec(
        "INSERT INTO results(id, run_id, candidate, variant, case_name, status, reason, time_us, "
        "speedup, bandwidth_gbs, roofline_pct, source_sha256, cubin_sha256, samples_sha256, "
        "detail_json) VALUES "
        "(11, 3, 'relu_vec', 'relu_vec[BLOCK=128]', 'canonical', 'passed', '', 1.10, 1.24, 942.4, "
        "23.8, '" + source + "', '" + cubin + "', '" + samples +
        "', '{\"message\":\"\",\"params\":{\"BLOCK\":\"128\"},\"gate_s\":0.5}'), "
        "(12, 3, 'cheat', 'cheat', 'canonical', 'rejected', 'impossible_speed', 0.01, NULL, NULL, "
        "NULL, '" + other + "', NULL, '" + other +
        "', '{\"message\":\"below the floor\"}'), "
        "(13, 3, 'huge', 'huge', 'canonical', 'rejected', 'compile_error', NULL, NULL, NULL, NULL, "
        "NULL, NULL, NULL, '{\"message\":\"over 1 MiB\"}')");
    before = rows_of(old, "roofline_pct");
    ASSERT_EQ(before.size(), 3U);
  }

  store s(home.path());
  EXPECT_EQ(s.db().user_version(), 9);
  EXPECT_EQ(rows_of(s.db(), "copy_bandwidth_pct"), before);
  EXPECT_EQ(query_int(s.db(), "SELECT count(*) FROM variant_results"), 3);
  EXPECT_EQ(query_text(s.db(), "SELECT compilation_id || ',' || measurement_id FROM "
                               "variant_results WHERE id = 11"),
            "1,1");
  // What the compilation and measurement cite is read from them; the rest stays on the row.
  EXPECT_EQ(query_int(s.db(), "SELECT count(*) FROM variant_results WHERE id = 11 AND "
                              "source_sha256 IS NULL AND cubin_sha256 IS NULL AND "
                              "samples_sha256 IS NULL"),
            1);
  EXPECT_EQ(query_text(s.db(), "SELECT samples_sha256 FROM variant_results WHERE id = 12"), other);
  EXPECT_EQ(query_text(s.db(), "SELECT message FROM variant_results WHERE id = 13"),
            "over 1 MiB");
  EXPECT_EQ(query_text(s.db(), "SELECT params_json FROM variant_results WHERE id = 11"),
            R"({"BLOCK":"128"})");
  EXPECT_EQ(query_int(s.db(), "SELECT count(*) FROM variant_metrics"), 5);
  // The catalog reads the migrated rows as it reads new ones.
  const auto results = run_catalog(s).results_of(3);
  ASSERT_EQ(results.size(), 3U);
  EXPECT_DOUBLE_EQ(*results[0].metric("copy_bandwidth_pct"), 23.8);
  EXPECT_EQ(results[0].cubin_sha256, cubin);
  EXPECT_EQ(results[1].message, "below the floor");
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
      s.record_variant_result(run, variant_result_record{.candidate = "c",
                                                         .variant = std::to_string(i),
                                                         .status = "passed",
                                                         .message = std::string(1000, 'x')});
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
