#include "evidence/run_catalog.hpp"

#include <gtest/gtest.h>

#include "../store/recorded_run.hpp"
#include "../store/store_test_support.hpp"
#include "core/error.hpp"

namespace blaster {
namespace {

using testing::temp_folder;

class RunCatalog : public ::testing::Test {
 protected:
  RunCatalog() : home_("catalog"), s_(home_.path()), catalog_(s_) {}
  temp_folder home_;
  store s_;
  run_catalog catalog_;
};

TEST_F(RunCatalog, RunsAreNewestFirstWithTheirOutcome) {
  const auto first = testing::record_bench_run(s_, "rmsnorm", "1");
  const auto second = testing::record_bench_run(s_, "softmax", "2");
  const std::int64_t unfinished = s_.begin_run("blaster bench --task rmsnorm", "rmsnorm", "");

  const auto all = catalog_.runs({});
  ASSERT_EQ(all.size(), 3U);
  EXPECT_EQ(all[0].run.id, unfinished);
  EXPECT_EQ(all[0].run.status, "running");
  EXPECT_EQ(all[0].results, 0);
  EXPECT_FALSE(all[0].best_speedup);
  EXPECT_EQ(all[1].run.id, second.run_id);
  EXPECT_EQ(all[2].run.id, first.run_id);
  EXPECT_EQ(all[2].results, 3);
  EXPECT_EQ(all[2].passed, 2);
  EXPECT_DOUBLE_EQ(*all[2].best_speedup, 1.7667);
  EXPECT_EQ(all[2].device_name, "NVIDIA H200");
  EXPECT_EQ(all[2].run.report_sha256, first.report_sha256);

  EXPECT_EQ(catalog_.runs({.task = "rmsnorm"}).size(), 2U);
  EXPECT_EQ(catalog_.runs({.status = "completed"}).size(), 2U);
  EXPECT_EQ(catalog_.runs({.limit = 1}).size(), 1U);
  EXPECT_EQ(catalog_.runs({.run_id = first.run_id}).at(0).run.task, "rmsnorm");
  EXPECT_TRUE(catalog_.runs({.task = "nothing"}).empty());
}

TEST_F(RunCatalog, ResolveTakesAnIdOrLatest) {
  EXPECT_THROW(catalog_.resolve("latest"), input_error);  // none yet
  const auto run = testing::record_bench_run(s_);
  EXPECT_EQ(catalog_.resolve("latest"), run.run_id);
  EXPECT_EQ(catalog_.resolve(std::to_string(run.run_id)), run.run_id);
  for (const char* bad : {"", "0", "-1", "1x", "twelve", "99999"}) {
    EXPECT_THROW(catalog_.resolve(bad), input_error) << bad;
  }
}

TEST_F(RunCatalog, HistoryFollowsATaskAcrossRuns) {
  const auto first = testing::record_bench_run(s_, "rmsnorm", "1");
  testing::record_bench_run(s_, "softmax", "2");
  const auto third = testing::record_bench_run(s_, "rmsnorm", "3");
  const auto all = catalog_.history("rmsnorm", "");
  ASSERT_EQ(all.size(), 6U);
  EXPECT_EQ(all.front().run_id, first.run_id);
  EXPECT_EQ(all.back().run_id, third.run_id);
  const auto fast = catalog_.history("rmsnorm", "rmsnorm_fast");
  ASSERT_EQ(fast.size(), 2U);
  // The view reads the cubin from the compilation the row cites, the time from its metrics.
  EXPECT_EQ(fast[1].result.cubin_sha256, third.fast_cubin_sha256);
  EXPECT_DOUBLE_EQ(*fast[0].result.metric("time_us"), 70.77);
  EXPECT_EQ(fast[0].device_name, "NVIDIA H200");
  EXPECT_TRUE(catalog_.history("softmax", "init").size() == 1U);
}

TEST_F(RunCatalog, DeviceNameFallsBackToDeviceJsonAndSurvivesGarbage) {
  s_.begin_run("a", "t", R"({"name":"NVIDIA L4"})");
  s_.begin_run("b", "t", "{not json");
  s_.begin_run("c", "t", "");
  const auto runs = catalog_.runs({});
  ASSERT_EQ(runs.size(), 3U);
  EXPECT_EQ(runs[0].device_name, "");
  EXPECT_EQ(runs[1].device_name, "");
  EXPECT_EQ(runs[2].device_name, "NVIDIA L4");
}

TEST_F(RunCatalog, RecordsOfARunHoldOnlyThatRun) {
  const auto first = testing::record_bench_run(s_, "rmsnorm", "1");
  testing::record_bench_run(s_, "rmsnorm", "2");
  const auto rows = catalog_.records_of(first.run_id);
  EXPECT_EQ(rows.at("runs").size(), 1U);
  EXPECT_EQ(rows.at("variant_results").size(), 3U);
  EXPECT_EQ(rows.at("variant_metrics").size(), 8U);  // four of each passed variant
  EXPECT_EQ(rows.at("compilations").size(), 1U);
  EXPECT_EQ(rows.at("compiled_kernels").size(), 1U);
  EXPECT_EQ(rows.at("measurements").size(), 1U);
  EXPECT_EQ(rows.at("sources").size(), 1U);
  EXPECT_EQ(rows.at("device_fingerprints").size(), 1U);
  EXPECT_EQ(rows.at("variant_metrics")[0].at("tag"), "time_us");
  EXPECT_EQ(rows.at("variant_metrics")[0].at("value"), 125.03);
  EXPECT_EQ(rows.at("metric_definitions").size(), 4U);
  for (const auto& r : rows.at("variant_results")) EXPECT_EQ(r.at("run_id"), first.run_id);
  // Each object the run cites, and none of the other run's.
  for (const auto& c : catalog_.cited_objects(first.run_id)) {
    EXPECT_TRUE(s_.cas().contains(c.sha256));
  }
  EXPECT_LT(catalog_.cited_objects(first.run_id).size(),
            catalog_.cited_objects(std::nullopt).size());
}

}  // namespace
}  // namespace blaster
