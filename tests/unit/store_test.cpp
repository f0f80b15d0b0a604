#include "evidence/store.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/sha256.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;

// Restores $BLASTER_HOME as the test found it.
class scoped_blaster_home {
 public:
  scoped_blaster_home() {
    if (const char* value = std::getenv("BLASTER_HOME")) saved_ = value;
  }
  ~scoped_blaster_home() {
    if (saved_) {
      ::setenv("BLASTER_HOME", saved_->c_str(), 1);
    } else {
      ::unsetenv("BLASTER_HOME");
    }
  }
  scoped_blaster_home(const scoped_blaster_home&) = delete;
  scoped_blaster_home& operator=(const scoped_blaster_home&) = delete;

 private:
  std::optional<std::string> saved_;
};

class Store : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    home_ = fs::temp_directory_path() /
            ("blaster-store-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(home_);
  }
  void TearDown() override { fs::remove_all(home_); }

  static std::int64_t count(database& db, std::string_view sql) {
    statement query = db.prepare(sql);
    EXPECT_TRUE(query.step()) << sql;
    return query.column_int64(0);
  }

  static variant_result_record passing_result(std::string candidate, std::string variant) {
    return variant_result_record{
        .candidate = std::move(candidate), .variant = std::move(variant), .status = "ok"};
  }

  fs::path home_;
};

TEST_F(Store, ResolveHomePrefersFlagThenEnvironmentThenDotBlaster) {
  const scoped_blaster_home restore;
  ::setenv("BLASTER_HOME", "/from/env", 1);
  EXPECT_EQ(resolve_home(fs::path("/from/flag")), fs::path("/from/flag"));
  EXPECT_EQ(resolve_home(std::nullopt), fs::path("/from/env"));
  ::setenv("BLASTER_HOME", "", 1);
  EXPECT_EQ(resolve_home(std::nullopt), fs::path("./.blaster"));
  ::unsetenv("BLASTER_HOME");
  EXPECT_EQ(resolve_home(std::nullopt), fs::path("./.blaster"));
  EXPECT_EQ(resolve_home(fs::path("/from/flag")), fs::path("/from/flag"));
  EXPECT_THROW(resolve_home(fs::path()), input_error);
}

TEST_F(Store, CreatesTheHomeWithDatabaseAndObjectStore) {
  store s(home_);
  EXPECT_EQ(s.home(), home_);
  EXPECT_TRUE(fs::is_regular_file(home_ / "blaster.db"));
  EXPECT_TRUE(fs::is_directory(home_ / "cas"));
  EXPECT_EQ(s.db().user_version(), 9);
  const std::string digest = s.cas().put("report");
  EXPECT_TRUE(fs::exists(home_ / "cas" / digest.substr(0, 2) / digest));
}

TEST_F(Store, RunRoundTripsThroughSql) {
  const std::string source_digest = sha256_hex(std::string_view("source"));
  const std::string report_digest = sha256_hex(std::string_view("report"));
  std::int64_t run_id = 0;
  {
    store s(home_);
    // Objects before the rows that cite them: the store refuses a row citing a missing object.
    ASSERT_EQ(s.cas().put("source"), source_digest);
    ASSERT_EQ(s.cas().put("report"), report_digest);
    run_id = s.begin_run("blaster run softmax", "softmax", R"({"name":"H200"})");
    variant_result_record timed;
    timed.candidate = "online_softmax";
    timed.variant = "block256";
    timed.case_name = "4096x4096/f32";
    timed.status = "ok";
    timed.metrics = {{"time_us", 12.5},
                     {"speedup", 1.75},
                     {"bandwidth_gbs", 3200.0},
                     {"copy_bandwidth_pct", 66.5}};
    timed.source_sha256 = source_digest;
    timed.detail_json = R"({"threads":256})";
    s.record_variant_result(run_id, timed);

    variant_result_record rejected;
    rejected.candidate = "naive";
    rejected.variant = "default";
    rejected.status = "rejected";
    rejected.reason = "max abs error 0.5 > 1e-5";
    s.record_variant_result(run_id, rejected);
    s.finish_run(run_id, "ok", report_digest);
  }

  store s(home_);  // Read back through a fresh connection: the rows reached the file.
  statement run = s.db().prepare(
      "SELECT started_at, finished_at, command, task, status, device_json, report_sha256 "
      "FROM runs WHERE id = ?1");
  run.bind(1, run_id);
  ASSERT_TRUE(run.step());
  const std::string started_at = run.column_text(0);
  const std::string finished_at = run.column_text(1);
  // 2025-01-31T12:34:56.789Z
  EXPECT_EQ(started_at.size(), 24u) << started_at;
  EXPECT_EQ(started_at[10], 'T') << started_at;
  EXPECT_EQ(started_at.back(), 'Z') << started_at;
  EXPECT_LE(started_at, finished_at);
  EXPECT_EQ(run.column_text(2), "blaster run softmax");
  EXPECT_EQ(run.column_text(3), "softmax");
  EXPECT_EQ(run.column_text(4), "ok");
  EXPECT_EQ(run.column_text(5), R"({"name":"H200"})");
  EXPECT_EQ(run.column_text(6), report_digest);
  EXPECT_FALSE(run.step());

  statement results = s.db().prepare(
      "SELECT candidate, variant, case_name, status, reason, time_us, speedup, bandwidth_gbs, "
      "copy_bandwidth_pct, source_sha256, cubin_sha256, samples_sha256, detail_json "
      "FROM results WHERE run_id = ?1 ORDER BY id");
  results.bind(1, run_id);
  ASSERT_TRUE(results.step());
  EXPECT_EQ(results.column_text(0), "online_softmax");
  EXPECT_EQ(results.column_text(1), "block256");
  EXPECT_EQ(results.column_text(2), "4096x4096/f32");
  EXPECT_EQ(results.column_text(3), "ok");
  EXPECT_TRUE(results.column_is_null(4));
  EXPECT_DOUBLE_EQ(results.column_double(5), 12.5);
  EXPECT_DOUBLE_EQ(results.column_double(6), 1.75);
  EXPECT_DOUBLE_EQ(results.column_double(7), 3200.0);
  EXPECT_DOUBLE_EQ(results.column_double(8), 66.5);
  EXPECT_EQ(results.column_text(9), source_digest);
  EXPECT_TRUE(results.column_is_null(10));
  EXPECT_TRUE(results.column_is_null(11));
  EXPECT_EQ(results.column_text(12), R"({"threads":256})");

  ASSERT_TRUE(results.step());
  EXPECT_EQ(results.column_text(0), "naive");
  EXPECT_TRUE(results.column_is_null(2));
  EXPECT_EQ(results.column_text(3), "rejected");
  EXPECT_EQ(results.column_text(4), "max abs error 0.5 > 1e-5");
  for (int column = 5; column <= 12; ++column) {
    EXPECT_TRUE(results.column_is_null(column)) << "column " << column;
  }
  EXPECT_FALSE(results.step());
}

TEST_F(Store, UnfinishedRunStaysRunning) {
  store s(home_);
  const std::int64_t run_id = s.begin_run("blaster run", "", "");
  statement run = s.db().prepare("SELECT status, finished_at, task, device_json FROM runs");
  ASSERT_TRUE(run.step());
  EXPECT_EQ(run.column_text(0), "running");
  EXPECT_TRUE(run.column_is_null(1));
  EXPECT_TRUE(run.column_is_null(2));
  EXPECT_TRUE(run.column_is_null(3));
  EXPECT_GT(run_id, 0);
}

TEST_F(Store, RefusesResultsOfUnknownRunsAndMalformedDigests) {
  store s(home_);
  variant_result_record result = passing_result("c", "v");
  // Foreign key on variant_results.run_id.
  EXPECT_THROW(s.record_variant_result(12345, result), error);
  EXPECT_THROW(s.finish_run(12345, "ok", ""), error);

  const std::int64_t run_id = s.begin_run("blaster run", "t", "{}");
  result.cubin_sha256 = "not-a-digest";
  EXPECT_THROW(s.record_variant_result(run_id, result), error);
  EXPECT_THROW(s.finish_run(run_id, "ok", "ABC"), error);
  EXPECT_EQ(count(s.db(), "SELECT count(*) FROM results"), 0);
}

TEST_F(Store, TwoStoresOnOneHomeInterleavingWritesLoseNothing) {
  store first(home_);
  store second(home_);
  std::set<std::int64_t> run_ids;
  for (int round = 0; round < 20; ++round) {
    store& writer = round % 2 == 0 ? first : second;
    store& other = round % 2 == 0 ? second : first;
    const std::int64_t run_id = writer.begin_run("interleaved", "", "");
    EXPECT_TRUE(run_ids.insert(run_id).second) << "run id " << run_id << " handed out twice";
    const variant_result_record result = passing_result(fmt::format("c{}", round), "v");
    // The other connection writes into the run this one began.
    other.record_variant_result(run_id, result);
    writer.record_variant_result(run_id, result);
    other.finish_run(run_id, "ok", "");
  }
  EXPECT_EQ(count(first.db(), "SELECT count(*) FROM runs"), 20);
  EXPECT_EQ(count(second.db(), "SELECT count(*) FROM results"), 40);
  EXPECT_EQ(count(first.db(), "SELECT count(*) FROM runs WHERE status = 'ok'"), 20);
}

TEST_F(Store, ConcurrentStoresOnOneHomeLoseNothing) {
  constexpr int writers = 4;
  constexpr int runs_per_writer = 25;
  std::vector<std::thread> threads;
  std::vector<std::string> failures(writers);
  for (int w = 0; w < writers; ++w) {
    threads.emplace_back([&, w] {
      try {
        store s(home_);  // Each thread its own connection, as separate processes would have.
        for (int i = 0; i < runs_per_writer; ++i) {
          const std::int64_t run_id = s.begin_run("concurrent", "", "");
          s.record_variant_result(run_id,
                                  passing_result(fmt::format("writer{}", w), fmt::format("{}", i)));
          s.finish_run(run_id, "ok", s.cas().put(fmt::format("report {}/{}", w, i)));
        }
      } catch (const std::exception& e) {
        failures[w] = e.what();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& failure : failures) EXPECT_EQ(failure, "");

  store s(home_);
  EXPECT_EQ(count(s.db(), "SELECT count(*) FROM runs WHERE status = 'ok'"),
            writers * runs_per_writer);
  EXPECT_EQ(count(s.db(), "SELECT count(DISTINCT candidate || '/' || variant) FROM results"),
            writers * runs_per_writer);
  EXPECT_EQ(count(s.db(), "SELECT count(DISTINCT report_sha256) FROM runs"),
            writers * runs_per_writer);
}

}  // namespace
}  // namespace blaster
