// Every metric of a variant is defined once, in benchmarking/report/variant_metrics.cpp, and from
// that one definition appears in the bench table's formats, in the report's JSON and in the store.
#include "benchmarking/report/variant_metrics.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <set>
#include <sstream>

#include "benchmarking/report/result_printer.hpp"
#include "benchmarking/report/run_record.hpp"
#include "evidence/run_catalog.hpp"
#include "evidence/store.hpp"
#include "evidence/table_renderer.hpp"
#include "profiling/counters.hpp"

namespace blaster {
namespace {

TEST(VariantMetrics, EachDescribesItselfUnderATagOfItsOwn) {
  std::set<std::string_view> tags;
  for (const auto& m : variant_metrics()) {
    EXPECT_TRUE(tags.insert(m.info.tag).second) << m.info.tag << " is defined twice";
    EXPECT_FALSE(m.info.name.empty()) << m.info.tag;
    EXPECT_FALSE(m.info.description.empty()) << m.info.tag;
    EXPECT_FALSE(m.info.format.empty()) << m.info.tag;
    EXPECT_EQ(find_variant_metric(m.info.tag), &m);
  }
  EXPECT_EQ(find_variant_metric("no_such_metric"), nullptr);
}

bench_report timed_report() {
  bench_report report;
  report.task = "rmsnorm";
  report.timed_case = "canonical";
  report.timing.mode = timing_mode::graph;
  report.floors = launch_floors{};
  report.floors->us[timing_mode::graph] = 0.5;
  variant_result r;
  r.candidate = r.label = "init";
  r.baseline = true;
  r.status = "passed";
  r.time_us = 2.0;
  r.timing = timing_samples{};
  report.results.push_back(r);
  return report;
}

// The time over the launch floor of the run's own mode: 2.0 us over an empty kernel's 0.5 us.
TEST(VariantMetrics, TimeOverTheLaunchFloorIsInEveryFormatAndTheStore) {
  const bench_report report = timed_report();
  const variant_metric* m = find_variant_metric("time_over_launch_floor");
  ASSERT_NE(m, nullptr);
  EXPECT_DOUBLE_EQ(*m->value(report, report.results[0]), 4.0);

  std::ostringstream md;
  make_renderer("md")->render(bench_table(report, /*console=*/false), md);
  EXPECT_NE(md.str().find("| x launch |"), std::string::npos) << md.str();
  EXPECT_NE(md.str().find("| 4.00x |"), std::string::npos) << md.str();
  EXPECT_DOUBLE_EQ(
      to_json(report).at("results").at(0).at("metrics").at("time_over_launch_floor").get<double>(),
      4.0);

  const auto home =
      std::filesystem::temp_directory_path() / ("blaster-metrics-" + std::to_string(::getpid()));
  std::filesystem::remove_all(home);
  {
    store s(home);
    const task_spec task =
        load_task(std::filesystem::path(BLASTER_SOURCE_DIR) / "tasks" / "rmsnorm");
    const std::int64_t run = s.begin_run("test", "rmsnorm", "{}");
    record_run(s, run, task, report);
    const run_catalog catalog(s);
    const auto results = catalog.results_of(run);
    ASSERT_EQ(results.size(), 1U);
    EXPECT_DOUBLE_EQ(*results[0].metric("time_over_launch_floor"), 4.0);
    bool defined = false;
    for (const auto& d : catalog.metric_definitions()) {
      defined = defined || (d.tag == "time_over_launch_floor" && d.name == "x launch");
    }
    EXPECT_TRUE(defined);
  }
  std::filesystem::remove_all(home);
}

// A floor the run did not measure gives no ratio rather than an infinite one.
TEST(VariantMetrics, NoLaunchFloorNoRatio) {
  bench_report report = timed_report();
  report.floors->us[timing_mode::graph] = 0.0;
  EXPECT_FALSE(find_variant_metric("time_over_launch_floor")->value(report, report.results[0]));
  report.floors.reset();
  EXPECT_FALSE(find_variant_metric("time_over_launch_floor")->value(report, report.results[0]));
}

// Tensor instructions of every kind count; a run recorded when hmma alone was counted keeps its
// column.
TEST(VariantMetrics, TheTensorPipeOfARunRecordedBeforeWgmmaCountedIsItsHmmaShare) {
  bench_report report = timed_report();
  variant_result& r = report.results[0];
  r.profile = diagnostics{};
  kernel_counters k;
  k.counters[std::string(counter::duration_ns)] = 1000;
  k.counters[std::string(counter::tensor_pipe_hmma_pct)] = 12.5;
  r.profile->counters.kernels.push_back(k);
  const variant_metric* m = find_variant_metric("tensor_pipe_pct");
  ASSERT_NE(m, nullptr);
  EXPECT_DOUBLE_EQ(*m->value(report, r), 12.5);
  r.profile->counters.kernels[0].counters[std::string(counter::tensor_pipe_pct)] = 40.0;
  EXPECT_DOUBLE_EQ(*m->value(report, r), 40.0);
  r.profile->counters.kernels[0].counters.clear();
  EXPECT_FALSE(m->value(report, r));
}

}  // namespace
}  // namespace blaster
