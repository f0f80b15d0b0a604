// blaster tune's choice at one size, from a bench report, and the table a case belongs to.
#include "optimize/tune.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "benchmarking/candidate/candidate.hpp"
#include "benchmarking/tuned/tuned_table.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "evidence/store.hpp"
#include "temp_home.hpp"

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

// A table of a million sizes (an engine may ship one) reads, merges with a new entry and writes
// in time linear in its size: each of the three took n^2/2 steps (ordered_json's key search,
// and an entry inserted into the middle of a vector), hours at this size.
TEST(TuneWrite, AMillionEntriesReadMergeAndWriteInLinearTime) {
  const auto folder = std::filesystem::temp_directory_path() /
                      ("blaster-tune-million-" + std::to_string(::getpid()));
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  constexpr std::int64_t sizes = 1'000'000;
  std::string text = "{";
  for (std::int64_t size = sizes; size >= 1; --size) {  // the file's order is not the sizes'
    text += fmt::format("\"{}\": {{\"V\": {}}},", 2 * size, size % 4);
  }
  text += R"("task": "rms_norm", "candidate": "a.cu"})";
  const auto name = "H=4096,device_name=NVIDIA_H200,dtype=bf16.json";
  write_file_atomically(folder / name, text);

  const auto start = std::chrono::steady_clock::now();
  const tuned_table table = read_tuned_table(folder / name);
  ASSERT_EQ(table.entries.size(), static_cast<std::size_t>(sizes));
  EXPECT_EQ(table.entries.front().size, 2);
  EXPECT_EQ(table.entries.back().params.at("V"), "0");
  tuned_table now{.key = table.key, .about = table.about, .entries = {}};
  now.put({.size = 3, .params = {{"V", "9"}}});
  std::vector<std::int64_t> kept;
  const tuned_table merged = with_earlier_entries(now, folder, kept);
  ASSERT_EQ(merged.entries.size(), static_cast<std::size_t>(sizes) + 1);
  EXPECT_EQ(merged.entries[1].params.at("V"), "9");
  EXPECT_EQ(kept.size(), static_cast<std::size_t>(sizes));
  write_tuned_table(folder, merged);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // About 5 s on two cores in a Release build, which the quadratic steps exceeded by hours.
  EXPECT_LT(seconds, 120.0);
  EXPECT_EQ(read_tuned_table(folder / name).entries.size(), static_cast<std::size_t>(sizes) + 1);
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

// An engine's table names some of a task's symbols (vLLM's fused_moe tables only E and N): the
// others are the task's own values, so a case that sets one otherwise is not the table's.
TEST(TuneCheck, ASymbolTheTablesNameLeavesOutIsTheTasksOwnValue) {
  const task_spec task =
      load_task(std::filesystem::path(BLASTER_SOURCE_DIR) / "tasks" / "fused_moe");
  tuned_table table;
  table.key = {{"E", "8"}, {"N", "14336"}, {"device_name", "NVIDIA_H100_80GB_HBM3"}};
  EXPECT_EQ(case_of(task, table, "M", 16), "m16");
  EXPECT_EQ(case_of(task, table, "M", 4096), "m4096");
  task_spec other_k = task;
  for (auto& c : other_k.cases) {
    if (c.name == "m16") c.values["K"] = 2048;
  }
  EXPECT_EQ(case_of(other_k, table, "M", 16), "") << "a K of its own, which the table's is not";
  table.key.emplace_back("K", "2048");
  EXPECT_EQ(case_of(task, table, "M", 16), "") << "a K the table names is held to";
  EXPECT_EQ(case_of(other_k, table, "M", 16), "m16");
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

// `tune --from-runs`: the entries that runs in the store already measured, as tune measures.
class TuneFromRuns : public ::testing::Test {
 protected:
  void SetUp() override {
    candidate_ = root_ / "kernels" / "rms_norm" / "rms_norm_regs.cu";
    sources_ = read_candidate(candidate_, {}, root_ / "kernels" / "common").sources_sha256;
    options_.bench.root = root_;
    options_.bench.task = "rms_norm";
    options_.bench.candidates = {candidate_};
    options_.size_symbol = "T";
    options_.cases = {{.name = "t16"}, {.name = "t1"}};
  }

  // A run of rms_norm at `case_name` that timed every configuration of rms_norm_regs as tune
  // does, THREADS=256 the fastest, and beside it another file's faster variant.
  bench_report report(const std::string& case_name, const std::string& device = "NVIDIA H200") {
    bench_report r;
    r.task = "rms_norm";
    r.timed_case = case_name;
    r.dtype = "bf16";
    r.nvrtc = "13.0";
    r.sessions = 5;
    r.device = cuda::device_properties{};
    r.device->name = device;
    r.device->driver_version = 13000;
    r.results.push_back(variant("init", {}, 40.0, true));
    for (const auto& [threads, us] : {std::pair{"128", 12.0}, {"256", 10.0}, {"512", 11.0}}) {
      auto v =
          variant(fmt::format("rms_norm_regs[THREADS={}]", threads), {{"THREADS", threads}}, us);
      v.candidate = "rms_norm_regs";
      v.sources_sha256 = sources_;
      r.results.push_back(std::move(v));
    }
    auto other = variant("rms_norm_other[B=1]", {{"B", "1"}}, 5.0);
    other.candidate = "rms_norm_other";
    r.results.push_back(std::move(other));
    return r;
  }

  // Records a completed run whose report is `r`; returns its id.
  std::int64_t record(store& s, bench_report r) {
    const std::int64_t id = s.begin_run("blaster bench", "rms_norm", "");
    r.run_id = id;
    s.finish_run(id, "completed", s.cas().put(to_json(r).dump()));
    return id;
  }

  const std::filesystem::path root_ = BLASTER_SOURCE_DIR;
  testing::temp_home home_{"tune-from-runs"};
  std::filesystem::path candidate_;
  std::string sources_;
  tune_options options_;
};

TEST_F(TuneFromRuns, EachCaseTakesTheNewestRunThatTimedEveryConfigurationOfTheCandidate) {
  store s(home_.path());
  record(s, report("t16"));
  const std::int64_t newer = record(s, report("t16"));
  bench_report one_session = report("t16");  // newer still, but it confirmed nothing
  one_session.sessions = 1;
  record(s, one_session);

  const tune_result result = tune_from_runs(options_, s);
  ASSERT_EQ(result.cases.size(), 2U);
  const tuned_case& t16 = result.cases[0];
  ASSERT_TRUE(t16.entry.has_value()) << t16.why;
  EXPECT_EQ(t16.run_id, newer);
  EXPECT_EQ(t16.entry->run_id, newer) << "the entry names the run that measured it";
  // The other file's faster variant is not the candidate's: it is no rival in its table.
  EXPECT_EQ(t16.label, "rms_norm_regs[THREADS=256]");
  EXPECT_EQ(t16.default_label, "rms_norm_regs[THREADS=128]");
  EXPECT_EQ(*t16.entry->default_time_us, 12.0);
  EXPECT_EQ(t16.device, "NVIDIA H200");
  EXPECT_EQ(t16.confirmed.size(), 3U);

  EXPECT_EQ(result.cases[1].case_name, "t1");
  EXPECT_FALSE(result.cases[1].entry.has_value());
  EXPECT_NE(result.cases[1].why.find("no completed run of rms_norm at case t1"), std::string::npos)
      << result.cases[1].why;

  ASSERT_EQ(result.tables.size(), 1U);
  EXPECT_EQ(tuned_file_name(result.tables[0].key),
            "H=4096,device_name=NVIDIA_H200,dtype=bf16,nvrtc=13.0,driver=13.0.json");
  ASSERT_EQ(result.tables[0].entries.size(), 1U);
  EXPECT_EQ(result.tables[0].entries[0].size, 16);
  EXPECT_EQ(result.tables[0].entries[0].params.at("THREADS"), "256");
  EXPECT_EQ(result.tables[0].about.at("candidate"), "rms_norm_regs.cu");
}

// A run that did not measure the file as it is, or not every configuration of it, is no tune of
// it: the case says which run came nearest and why.
TEST_F(TuneFromRuns, ARunOfAnotherVersionOrOfSomeConfigurationsIsNoEntry) {
  const auto why_of = [&](const std::function<void(bench_report&)>& change) {
    testing::temp_home home("tune-from-runs-why");
    store s(home.path());
    bench_report r = report("t16");
    change(r);
    const std::int64_t id = record(s, r);
    const tune_result result = tune_from_runs(options_, s);
    EXPECT_TRUE(result.tables.empty());
    EXPECT_FALSE(result.cases.at(0).entry.has_value());
    const std::string why = result.cases.at(0).why;
    EXPECT_EQ(why.rfind(fmt::format("run {} ", id), 0), 0U) << why;
    return why;
  };
  EXPECT_NE(why_of([](bench_report& r) {
              r.results[2].sources_sha256 = std::string(64, 'a');
            }).find("another version of rms_norm_regs.cu"),
            std::string::npos);
  EXPECT_NE(why_of([](bench_report& r) {
              r.results.erase(r.results.begin() + 3);
            }).find("timed 2 of the 3 configurations"),
            std::string::npos);
  EXPECT_NE(why_of([](bench_report& r) {
              // A table chose THREADS=256: the run timed it alone.
              r.results.erase(r.results.begin() + 3);
              r.results.erase(r.results.begin() + 1);
              r.results[1].tuned = tuned_choice{};
              r.results[1].tuned->file = "kernels/rms_norm/tuned/t.json";
            }).find("timed only the configuration that kernels/rms_norm/tuned/t.json chose"),
            std::string::npos);
  EXPECT_NE(why_of([](bench_report& r) {
              r.results.erase(r.results.begin() + 1, r.results.begin() + 4);
            }).find("has no variant of rms_norm_regs.cu"),
            std::string::npos);
}

// Runs of two GPUs give each its own table; a run of another task, or not completed, none.
TEST_F(TuneFromRuns, EachDeviceOfTheRunsGetsItsOwnTable) {
  store s(home_.path());
  record(s, report("t16", "NVIDIA H200"));
  record(s, report("t1", "NVIDIA H100 80GB HBM3"));
  const std::int64_t interrupted = s.begin_run("blaster bench", "rms_norm", "");
  s.finish_run(interrupted, "interrupted", s.cas().put(to_json(report("t1")).dump()));
  const tune_result result = tune_from_runs(options_, s);
  ASSERT_EQ(result.tables.size(), 2U);
  std::set<std::string> names;
  for (const auto& t : result.tables) {
    names.insert(t.key_value("device_name"));
    EXPECT_EQ(t.entries.size(), 1U);
  }
  EXPECT_EQ(names, (std::set<std::string>{"NVIDIA_H200", "NVIDIA_H100_80GB_HBM3"}));
  ASSERT_EQ(result.cases.size(), 2U);
  EXPECT_EQ(result.cases[1].device, "NVIDIA H100 80GB HBM3");
}

TEST_F(TuneFromRuns, ACandidateWhosePlanDoesNotParseIsNamed) {
  const auto bad = home_.path() / "bad.cu";
  std::ofstream(bad) << "__global__ void k() {}\n";
  options_.bench.candidates = {bad};
  store s(home_.path() / "store");
  try {
    tune_from_runs(options_, s);
    FAIL() << "a file without a plan has no configurations to take";
  } catch (const input_error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.cu"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace blaster
