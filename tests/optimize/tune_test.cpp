// blaster tune's choice at one size, from a bench report, and the table a case belongs to.
#include "optimize/tune.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "benchmarking/tuned_table.hpp"
#include "core/error.hpp"

namespace blaster {
namespace {

variant_result variant(const std::string& label, std::map<std::string, std::string> params,
                       std::optional<double> time_us, bool baseline = false) {
  variant_result r;
  r.label = label;
  r.params = std::move(params);
  r.baseline = baseline;
  r.status = time_us ? "passed" : "rejected";
  if (!time_us) r.reason = reason_code::wrong_result;
  r.time_us = time_us;
  return r;
}

bench_report report_of(std::vector<variant_result> results) {
  bench_report r;
  r.run_id = 7;
  r.results = std::move(results);
  return r;
}

TEST(TuneBestOf, TheFastestConfirmedVariantWithItsIntervalAndTheDefaultsTime) {
  auto fast = variant("k[B=256]", {{"B", "256"}}, 10.0);
  fast.verdict = verdict_result{};
  fast.verdict->speedup.point = 4.0;
  fast.verdict->speedup.low = 3.9;
  fast.verdict->speedup.high = 4.2;
  auto screened = variant("k[B=512]", {{"B", "512"}}, 9.0);
  screened.screened = true;  // faster in the first session alone: not confirmed
  const auto c =
      best_of(report_of({variant("init", {}, 40.0, true), variant("k[B=128]", {{"B", "128"}}, 12.0),
                         fast, screened, variant("k[B=1024]", {{"B", "1024"}}, std::nullopt)}),
              "t16", 16);
  ASSERT_TRUE(c.entry.has_value()) << c.why;
  EXPECT_EQ(c.label, "k[B=256]");
  EXPECT_EQ(c.default_label, "k[B=128]");
  EXPECT_EQ(c.entry->size, 16);
  EXPECT_EQ(c.entry->params.at("B"), "256");
  EXPECT_EQ(*c.entry->time_us, 10.0);
  EXPECT_EQ(*c.entry->default_time_us, 12.0);
  ASSERT_TRUE(c.entry->interval_us.has_value());
  EXPECT_DOUBLE_EQ(c.entry->interval_us->first, 40.0 / 4.2);
  EXPECT_DOUBLE_EQ(c.entry->interval_us->second, 40.0 / 3.9);
  EXPECT_EQ(c.run_id, 7);
  // The entry's rivals at its size: confirmed ones only, fastest first.
  EXPECT_EQ(c.confirmed,
            (std::vector<std::pair<std::string, double>>{{"k[B=256]", 10.0}, {"k[B=128]", 12.0}}));
}

TEST(TuneBestOf, NoEntryWhereNoVariantPassed) {
  const auto c = best_of(report_of({variant("init", {}, 40.0, true),
                                    variant("k[B=128]", {{"B", "128"}}, std::nullopt)}),
                         "t1", 1);
  EXPECT_FALSE(c.entry.has_value());
  EXPECT_NE(c.why.find("no variant"), std::string::npos) << c.why;
  ASSERT_EQ(c.rejected.size(), 1U);
  EXPECT_EQ(c.rejected[0].label, "k[B=128]");
  EXPECT_FALSE(c.rejected[0].baseline);
  EXPECT_EQ(c.rejected[0].why, "wrong_result: ");
}

TEST(TuneBestOf, EveryRejectionOfTheRunIsListedTheBaselinesFirst) {
  auto baseline = variant("init", {}, std::nullopt, true);
  baseline.reason = reason_code::stale_in_timing;
  baseline.message = "timing: back to back a launch took 5.00 us";
  auto late = variant("k[B=512]", {{"B", "512"}}, std::nullopt);
  late.reason = reason_code::timeout;
  late.message = "timing: no answer in 9 s";
  const auto c = best_of(report_of({baseline, variant("k[B=256]", {{"B", "256"}}, 10.0), late}),
                         "t1024", 1024);
  ASSERT_TRUE(c.entry.has_value()) << c.why;
  EXPECT_FALSE(c.entry->interval_us.has_value()) << "no baseline time to bound it";
  ASSERT_EQ(c.rejected.size(), 2U);
  EXPECT_EQ(c.rejected[0].label, "init");
  EXPECT_TRUE(c.rejected[0].baseline);
  EXPECT_EQ(c.rejected[0].why, "stale_in_timing: timing: back to back a launch took 5.00 us");
  EXPECT_EQ(c.rejected[1].label, "k[B=512]");
  EXPECT_EQ(c.rejected[1].why, "timeout: timing: no answer in 9 s");
}

TEST(TuneTableKey, TheShapeWithoutTheSizeThenDeviceDtypeAndToolchain) {
  const task_spec task =
      load_task(std::filesystem::path(BLASTER_SOURCE_DIR) / "tasks" / "rms_norm");
  bench_report r;
  r.dtype = "bf16";
  r.nvrtc = "13.0";
  r.device = cuda::device_properties{};
  r.device->name = "NVIDIA H200";
  r.device->driver_version = 13000;
  const auto key = table_key(task, task.find_case("t16"), "T", r);
  EXPECT_EQ(tuned_file_name(key),
            "H=4096,device_name=NVIDIA_H200,dtype=bf16,nvrtc=13.0,driver=13.0.json");
  // 70B's hidden size is another shape, so another table.
  EXPECT_NE(table_key(task, task.find_case("h8192_t1"), "T", r), key);
}

// Tuning some sizes again keeps the table's entries at the others; another candidate's table
// under the same name is not overwritten.
TEST(TuneWrite, TuningSomeSizesAgainKeepsTheOthers) {
  const auto folder =
      std::filesystem::temp_directory_path() / ("blaster-tune-write-" + std::to_string(::getpid()));
  std::filesystem::remove_all(folder);
  auto table = [](std::vector<std::int64_t> sizes, int threads, const std::string& candidate) {
    tuned_table t{.key = {{"H", "4096"}, {"device_name", "NVIDIA_H200"}, {"dtype", "bf16"}},
                  .about = {{"candidate", candidate}, {"task", "rms_norm"}},
                  .entries = {}};
    for (const auto size : sizes) {
      t.entries.push_back({.size = size,
                           .params = {{"THREADS", std::to_string(threads)}},
                           .time_us = 1.0,
                           .interval_us = std::nullopt,
                           .default_time_us = std::nullopt});
    }
    return t;
  };
  std::vector<std::int64_t> kept;
  write_tuned_table(folder, with_earlier_entries(table({1, 128, 8192}, 256, "a.cu"), folder, kept));
  EXPECT_TRUE(kept.empty()) << "nothing earlier";
  const tuned_table merged = with_earlier_entries(table({128}, 512, "a.cu"), folder, kept);
  EXPECT_EQ(kept, (std::vector<std::int64_t>{1, 8192}));
  ASSERT_EQ(merged.entries.size(), 3U);
  EXPECT_EQ(merged.entries[0].size, 1);
  EXPECT_EQ(merged.entries[1].params.at("THREADS"), "512") << "the size tuned now is the new one";
  EXPECT_EQ(merged.entries[2].params.at("THREADS"), "256");
  std::vector<std::int64_t> ignored;
  EXPECT_THROW(static_cast<void>(with_earlier_entries(table({1}, 64, "b.cu"), folder, ignored)),
               input_error);
  std::filesystem::remove_all(folder);
}

TEST(TuneCheck, AnEntryIsMeasuredAgainAtTheCaseOfItsSizeAndShape) {
  const task_spec task =
      load_task(std::filesystem::path(BLASTER_SOURCE_DIR) / "tasks" / "rms_norm");
  tuned_table table;
  table.key = {{"H", "4096"}, {"device_name", "NVIDIA_H200"}};
  EXPECT_EQ(case_of(task, table, "T", 16), "t16");
  EXPECT_EQ(case_of(task, table, "T", 1), "t1");
  EXPECT_EQ(case_of(task, table, "T", 3), "") << "no case of 3 tokens";
  table.key = {{"H", "8192"}};
  EXPECT_EQ(case_of(task, table, "T", 1), "h8192_t1") << "the 70B shape's own case";
  EXPECT_EQ(case_of(task, table, "T", 16), "") << "no 16-token case of hidden 8192";
}

// A table of two configurations: P=1 at one token, P=8 at 16 and 8192.
tuned_table two_configurations() {
  tuned_table table;
  table.entries = {{.size = 1, .params = {{"P", "1"}}},
                   {.size = 16, .params = {{"P", "8"}}},
                   {.size = 8192, .params = {{"P", "8"}}}};
  return table;
}

variant_result sessions_of(variant_result r, std::vector<double> medians_us) {
  r.session_medians_us = std::move(medians_us);
  return r;
}

TEST(TuneCheck, AnEntryStillTheBestShowsTheOtherEntriesConfigurationsAtItsSize) {
  const tuned_table table = two_configurations();
  const auto report =
      report_of({variant("init", {}, 40.0, true), variant("k[P=8]", {{"P", "8"}}, 1.5),
                 variant("k[P=1]", {{"P", "1"}}, 1.2), variant("k[P=2]", {{"P", "2"}}, 1.3)});
  const checked_entry e = judge_entry(report, table, table.entries[0], "t1");
  EXPECT_TRUE(e.still_best);
  EXPECT_FALSE(e.within_noise);
  EXPECT_EQ(e.table_label, "k[P=1]");
  ASSERT_EQ(e.rivals.size(), 1U) << "the two entries of P=8 are one configuration";
  EXPECT_EQ(e.rivals[0].label, "k[P=8]");
  EXPECT_EQ(e.rivals[0].sizes, (std::vector<std::int64_t>{16, 8192}));
  EXPECT_EQ(e.rivals[0].time_us, 1.5);
  EXPECT_EQ(e.rivals[0].why, "");
}

TEST(TuneCheck, AnotherEntrysConfigurationWithoutATimeSaysWhy) {
  const tuned_table table = two_configurations();
  auto rival = variant("k[P=8]", {{"P", "8"}}, std::nullopt);
  rival.reason = reason_code::stale_in_timing;
  rival.message = "timing: a launch after the timing differs";
  auto report =
      report_of({variant("init", {}, 40.0, true), variant("k[P=1]", {{"P", "1"}}, 1.2), rival});
  checked_entry e = judge_entry(report, table, table.entries[0], "t1");
  ASSERT_EQ(e.rivals.size(), 1U);
  EXPECT_FALSE(e.rivals[0].time_us.has_value());
  EXPECT_EQ(e.rivals[0].why,
            "rejected, stale_in_timing: timing: a launch after the timing differs");
  report.results[2] = variant("k[P=8]", {{"P", "8"}}, 1.5);
  report.results[2].screened = true;
  e = judge_entry(report, table, table.entries[0], "t1");
  EXPECT_EQ(e.rivals[0].why, "screened out after the first session");
}

TEST(TuneCheck, AnotherConfigurationFasterBeyondTheNoiseMakesTheEntryStale) {
  const tuned_table table = two_configurations();
  // P=2 is 10% faster than the table's P=1 in every one of five paired sessions.
  const auto report =
      report_of({variant("init", {}, 40.0, true),
                 sessions_of(variant("k[P=1]", {{"P", "1"}}, 1.0), {1.0, 1.01, 0.99, 1.0, 1.02}),
                 sessions_of(variant("k[P=2]", {{"P", "2"}}, 0.9), {0.9, 0.91, 0.89, 0.9, 0.92}),
                 variant("k[P=8]", {{"P", "8"}}, 1.4)});
  const checked_entry e = judge_entry(report, table, table.entries[0], "t1");
  EXPECT_FALSE(e.still_best);
  EXPECT_FALSE(e.within_noise);
  EXPECT_EQ(e.now.label, "k[P=2]");
  ASSERT_TRUE(e.best_over_table.has_value());
  EXPECT_GT(e.best_over_table->low, 1.0);
}

TEST(TuneCheck, AnotherConfigurationFasterWithinTheNoiseLeavesTheEntryTheBest) {
  const tuned_table table = two_configurations();
  // P=2's median is lower, but it is slower than P=1 in two of the five paired sessions.
  const auto report =
      report_of({variant("init", {}, 40.0, true),
                 sessions_of(variant("k[P=1]", {{"P", "1"}}, 1.0), {1.0, 0.95, 1.05, 1.0, 1.0}),
                 sessions_of(variant("k[P=2]", {{"P", "2"}}, 0.99), {0.99, 1.04, 0.96, 0.99, 1.01}),
                 variant("k[P=8]", {{"P", "8"}}, 1.4)});
  const checked_entry e = judge_entry(report, table, table.entries[0], "t1");
  EXPECT_EQ(e.now.label, "k[P=2]");
  ASSERT_TRUE(e.best_over_table.has_value());
  EXPECT_LE(e.best_over_table->low, 1.0);
  EXPECT_TRUE(e.within_noise);
  EXPECT_TRUE(e.still_best);
}

TEST(TuneCheck, AnEntryScreenedOutIsNoLongerTheBest) {
  const tuned_table table = two_configurations();
  auto mine = variant("k[P=1]", {{"P", "1"}}, 2.0);
  mine.screened = true;  // timed in the first session only: no paired sessions to weigh
  const auto report =
      report_of({variant("init", {}, 40.0, true), mine, variant("k[P=8]", {{"P", "8"}}, 1.1)});
  const checked_entry e = judge_entry(report, table, table.entries[0], "t1");
  EXPECT_FALSE(e.still_best);
  EXPECT_TRUE(e.table_screened);
  EXPECT_FALSE(e.best_over_table.has_value());
}

TEST(TuneCheck, AConfigurationTheCandidateNoLongerHasIsSaidSo) {
  const tuned_table table = two_configurations();
  const auto report =
      report_of({variant("init", {}, 40.0, true), variant("k[P=8]", {{"P", "8"}}, 1.1)});
  const checked_entry e = judge_entry(report, table, table.entries[0], "t1");
  EXPECT_FALSE(e.still_best);
  EXPECT_NE(e.why.find("not among"), std::string::npos) << e.why;
}

}  // namespace
}  // namespace blaster
