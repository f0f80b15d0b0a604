// The portfolio without a GPU: the suite file, resuming a killed portfolio without redoing
// recorded work (unless its sources changed), the report's goals and ratios, and the bundle that
// `blaster verify` checks.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "benchmarking/report/result_printer.hpp"
#include "core/cuda_driver.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/sha256.hpp"
#include "evidence/bundle_verifier.hpp"
#include "evidence/run_catalog.hpp"
#include "evidence/sha256sums.hpp"
#include "evidence/store.hpp"
#include "evidence/store_merge.hpp"
#include "portfolio/merge_source.hpp"
#include "portfolio/portfolio_figure.hpp"
#include "portfolio/portfolio_report.hpp"
#include "portfolio/portfolio_runner.hpp"
#include "portfolio/portfolio_tables.hpp"
#include "portfolio/suite.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

class Portfolio : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("blaster-portfolio-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const std::string& text) const {
    write_file_atomically(dir_ / name, text);
    return dir_ / name;
  }

  // Two tasks, three cases: small enough to reason about, real tasks so that they load.
  // A portfolio of the tasks under `root`, under the suite's own protocol, resuming what it can.
  static portfolio_options options_at(const fs::path& root = BLASTER_SOURCE_DIR) {
    return {.root = root,
            .arch = {},
            .sessions = 0,
            .fresh = false,
            .sanitize = true,
            .command = "t",
            .compile = {},
            .shard = 1,
            .shards = 1,
            .compile_only = false,
            .recorded_only = false,
            .gpus = {},
            .choose_gpus = {}};
  }

  // The same on two GPUs (no GPU is touched: the bench is a stand-in).
  static portfolio_options on_two_gpus() {
    portfolio_options options = options_at();
    options.gpus = {gpu_lane{.ordinal = 0, .visible = "0", .device = {}},
                    gpu_lane{.ordinal = 1, .visible = "1", .device = {}}};
    return options;
  }

  // A root of its own under the test's folder, with copies of the source tree's `folders`, so
  // that their files can be edited.
  fs::path root_with(std::initializer_list<const char*> folders) const {
    const fs::path root = dir_ / "root";
    for (const char* folder : folders) {
      fs::create_directories(root / folder);
      fs::copy(fs::path(BLASTER_SOURCE_DIR) / folder, root / folder, fs::copy_options::recursive);
    }
    return root;
  }

  suite two_tasks(const fs::path& root = BLASTER_SOURCE_DIR) const {
    const auto file = write("mini.json", R"({
      "name": "mini", "title": "two tasks",
      "protocol": {"sessions": 5},
      "entries": [
        {"id": "019", "task": "relu", "cases": [{"case": "canonical"}, {"case": "large", "mode": "hot"}]},
        {"id": "036", "task": "rmsnorm", "cases": [{"case": "canonical"}]}
      ]})");
    return load_suite(root, file.string());
  }

  fs::path dir_;
};

// A bench that records a run the way run_bench does, with a baseline at 10 us and a candidate
// at `candidate_us`, and counts what it was asked to do.
struct fake_bench {
  std::vector<std::string> asked;  // "task/case mode"
  std::string fail_at;             // a task/case to throw at, as a kill would stop the process
  std::string stop_after;  // a task/case to throw at once its run is recorded, before the portfolio
                           // records it
  double candidate_us = 5.0;
  std::string revision = "0123abc";     // the harness revision its reports carry
  std::function<void()> while_running;  // what happens while each case runs
  std::vector<bool> used_tuned;         // each case's use_tuned, as it was asked

  std::vector<std::vector<std::string>> series;  // each series' cases, as it first came

  bench_report operator()(const bench_options& o, store& records, warm_bench& warm) {
    // A series not seen before is one no run has named yet, as run_bench names it.
    if (warm.series.empty()) {
      series.push_back(warm.cases);
      warm.join("fake");
    }
    const std::string key = o.task + "/" + o.timed_case;
    asked.push_back(key + " " +
                    (o.mode_given ? std::string(to_string(o.timing.mode)) : "task's mode"));
    if (key == fail_at) throw std::runtime_error("killed");
    if (while_running) while_running();
    used_tuned.push_back(o.use_tuned);
    bench_report r;
    r.gpu = true;
    r.task = o.task;
    r.timed_case = o.timed_case;
    r.timed_shape = "n=1";
    r.dtype = "f16";
    r.blaster_revision = revision;
    r.timing = o.timing;
    r.sessions = o.sessions;
    r.floors = launch_floors{};
    r.floors->us[timing_mode::hot] = 4.0;
    r.floors->us[timing_mode::cold] = 0.5;
    r.floors->us[timing_mode::graph] = 1.0;
    timing_samples t;
    t.cupti.kernel_us = 1.0;
    variant_result base;
    base.label = base.candidate = "init";
    base.baseline = true;
    base.status = "passed";
    base.time_us = 10.0;
    base.speedup = 1.0;
    base.timing = t;
    variant_result cand;
    cand.label = cand.candidate = "fast";
    cand.status = "passed";
    cand.time_us = candidate_us;
    cand.speedup = 10.0 / candidate_us;
    cand.copy_bandwidth_pct = 90.0;
    cand.time_over_floor = 1.25;  // 80% of the roofline floor
    cand.timing = t;
    verdict_result v;
    v.v = verdict::improved;
    v.speedup = {.low = 1.9, .high = 2.1, .point = 10.0 / candidate_us};
    v.sessions = o.sessions;
    cand.verdict = v;
    if (o.profile) {
      cand.profile = diagnostics{};
      cand.profile->diagnosis = counter_diagnosis{};
      cand.profile->diagnosis->line = "latency-bound; long_scoreboard 70%";
    }
    // A case named "large" moves the most bytes of its task.
    r.roofline_bytes = o.timed_case == "large" ? 1e9 : 1e6;
    r.results = {base, cand};
    r.run_id = records.begin_run(o.command, o.task, "{}");
    records.finish_run(r.run_id, "completed", records.cas().put(stored_report_bytes(r)));
    if (key == stop_after) throw std::runtime_error("stopped");
    return r;
  }
};

TEST_F(Portfolio, Core10SuiteNamesTenTasksAndTheirCases) {
  const suite s = load_suite(BLASTER_SOURCE_DIR, "core10");
  ASSERT_EQ(s.entries.size(), 10U);
  EXPECT_EQ(s.protocol.sessions, 5);
  std::size_t cases = 0;
  for (const auto& e : s.entries) {
    cases += e.cases.size();
    EXPECT_EQ(e.cases.front().name, "canonical") << e.task;
  }
  EXPECT_EQ(cases, 19U);  // layernorm's canonical shape is KernelBench's current one
}

TEST_F(Portfolio, InferSuiteTimesServedSizesAndOneTokenInGraphMode) {
  const suite s = load_suite(BLASTER_SOURCE_DIR, "infer");
  EXPECT_GE(s.entries.size(), 9U);
  for (const auto& e : s.entries) {
    SCOPED_TRACE(e.task);
    EXPECT_GE(e.cases.size(), 4U) << "served sizes, not one shape";
    for (const auto& c : e.cases) {
      // One token is launch-bound: hot timing would measure the host's submission rate. The
      // task's case says graph, and the suite keeps it.
      if (c.name == "t1") {
        const task_spec task = load_task(BLASTER_SOURCE_DIR, e.task);
        EXPECT_EQ(task.find_case("t1").timing_mode, std::optional<timing_mode>(timing_mode::graph));
        EXPECT_EQ(c.mode.value_or("graph"), "graph");
      }
    }
  }
}

TEST_F(Portfolio, ABadSuiteNamesTheFileThePathAndTheFix) {
  auto message = [&](const std::string& text) {
    const auto file = write("bad.json", text);
    try {
      static_cast<void>(load_suite(BLASTER_SOURCE_DIR, file.string()));
    } catch (const input_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string head = R"({"name": "b", "title": "t", "entries": [)";
  EXPECT_NE(message(head + R"({"id": "1", "task": "nope", "cases": [{"case": "c"}]}]})")
                .find("bad.json: entries[0].task"),
            std::string::npos);
  EXPECT_NE(message(head + R"({"id": "1", "task": "relu", "cases": [{"case": "huge"}]}]})")
                .find("entries[0].cases[0].case: task relu has no case \"huge\""),
            std::string::npos);
  EXPECT_NE(
      message(head +
              R"({"id": "1", "task": "relu", "cases": [{"case": "canonical", "mode": "warm"}]}]})")
          .find("entries[0].cases[0].mode: must be hot, cold, graph or single"),
      std::string::npos);
  EXPECT_NE(
      message(R"({"name": "b", "title": "t", "entries": [], "extra": 1})").find("unknown key"),
      std::string::npos);
  EXPECT_NE(message("{").find("is not valid JSON"), std::string::npos);
}

TEST_F(Portfolio, AKilledPortfolioResumesWithoutRedoingRecordedWork) {
  store records(dir_ / "home");
  const suite s = two_tasks();
  const portfolio_options options = options_at();
  fake_bench first;
  first.fail_at = "rmsnorm/canonical";  // dies in the third item
  EXPECT_THROW(static_cast<void>(run_portfolio(s, options, records, std::ref(first))),
               std::runtime_error);
  ASSERT_EQ(first.asked.size(), 3U);
  // Each item's mode: the suite's where it names one, else the task's own.
  EXPECT_EQ(first.asked[0], "relu/canonical task's mode");
  EXPECT_EQ(first.asked[1], "relu/large hot");
  // Each entry is one series of its cases, so that a configuration is gated once per task.
  EXPECT_EQ(first.series,
            (std::vector<std::vector<std::string>>{{"canonical", "large"}, {"canonical"}}));

  fake_bench second;
  const auto outcomes = run_portfolio(s, options, records, std::ref(second));
  ASSERT_EQ(second.asked.size(), 1U);  // only the item the kill interrupted
  EXPECT_EQ(second.series, std::vector<std::vector<std::string>>{{"canonical"}});
  EXPECT_EQ(second.asked[0], "rmsnorm/canonical task's mode");
  ASSERT_EQ(outcomes.size(), 3U);
  EXPECT_TRUE(outcomes[0].resumed);
  EXPECT_TRUE(outcomes[1].resumed);
  EXPECT_FALSE(outcomes[2].resumed);
  EXPECT_EQ(outcomes[0].report.timed_case, "canonical");
  // Each case's progress names the report its run recorded, not another copy of it.
  const json progress = json::parse(read_file(portfolio_progress_file(records, s)));
  for (const auto& o : outcomes) {
    EXPECT_EQ(progress.at("done").at(o.item.key()).at("report_sha256"),
              run_catalog(records).find_run(o.run_id)->report_sha256)
        << o.item.key();
  }

  // Another protocol is other work: nothing is resumed.
  fake_bench third;
  portfolio_options three = options;
  three.sessions = 3;
  static_cast<void>(run_portfolio(s, three, records, std::ref(third)));
  EXPECT_EQ(third.asked.size(), 3U);
  // And --fresh redoes everything.
  fake_bench fourth;
  three.fresh = true;
  static_cast<void>(run_portfolio(s, three, records, std::ref(fourth)));
  EXPECT_EQ(fourth.asked.size(), 3U);
}

// Stopped after a case's run is recorded and before the portfolio writes that it is done (scancel
// in that window): the resumed portfolio takes that run as the case's record, and redoes the
// case only where its sources have changed since.
TEST_F(Portfolio, AStopBetweenARunAndItsProgressDoesNotRecordTheCaseTwice) {
  store records(dir_ / "home");
  const suite s = two_tasks();
  fake_bench first;
  first.stop_after = "relu/large";
  EXPECT_THROW(static_cast<void>(run_portfolio(s, options_at(), records, std::ref(first))),
               std::runtime_error);
  ASSERT_EQ(first.asked.size(), 2U);

  fake_bench second;
  const auto outcomes = run_portfolio(s, options_at(), records, std::ref(second));
  EXPECT_EQ(second.asked, std::vector<std::string>{"rmsnorm/canonical task's mode"});
  ASSERT_EQ(outcomes.size(), 3U);
  EXPECT_TRUE(outcomes[1].resumed);
  EXPECT_EQ(outcomes[1].item.key(), "relu/large");
  statement runs =
      records.db().prepare("SELECT COUNT(*) FROM runs WHERE command LIKE '%relu case large'");
  ASSERT_TRUE(runs.step());
  EXPECT_EQ(runs.column_int64(0), 1) << "relu large was recorded twice";
  EXPECT_EQ(outcomes[1].run_id, 2);

  // A run of the same command that came before the portfolio began the case is not its record.
  fake_bench third;
  third.stop_after = "relu/canonical";
  portfolio_options fresh = options_at();
  fresh.fresh = true;
  EXPECT_THROW(static_cast<void>(run_portfolio(s, fresh, records, std::ref(third))),
               std::runtime_error);
  json progress = json::parse(read_file(dir_ / "home/portfolio/mini.progress.json"));
  ASSERT_TRUE(progress.at("pending").contains("relu/canonical"));
  progress["pending"]["relu/canonical"]["after_run"] = 1000;  // as if begun after every run here
  write_file_atomically(dir_ / "home/portfolio/mini.progress.json", progress.dump());
  fake_bench fourth;
  static_cast<void>(run_portfolio(s, options_at(), records, std::ref(fourth)));
  EXPECT_EQ(fourth.asked.front(), "relu/canonical task's mode");
}

TEST_F(Portfolio, AResumeRedoesTheItemsWhoseTaskOrCandidatesChanged) {
  const fs::path root =
      root_with({"tasks/relu", "tasks/rmsnorm", "kernels/relu", "kernels/rmsnorm"});
  store records(dir_ / "home");
  const suite s = two_tasks(root);
  const portfolio_options options = options_at(root);
  auto rerun = [&](std::function<void()> while_running = {}) {
    fake_bench bench;
    bench.while_running = std::move(while_running);
    const auto outcomes = run_portfolio(s, options, records, std::ref(bench));
    std::vector<bool> resumed;
    for (const auto& o : outcomes) resumed.push_back(o.resumed);
    return std::pair(bench.asked, resumed);
  };
  EXPECT_EQ(rerun().first.size(), 3U);
  EXPECT_TRUE(rerun().first.empty());  // nothing changed: nothing redone

  // One of rmsnorm's candidates edited: rmsnorm's item is redone, relu's are resumed.
  { std::ofstream(root / "kernels/rmsnorm/rmsnorm_vec_regs.cu", std::ios::app) << "// edited\n"; }
  auto [asked, resumed] = rerun();
  EXPECT_EQ(asked, std::vector<std::string>{"rmsnorm/canonical task's mode"});
  EXPECT_EQ(resumed, (std::vector<bool>{true, true, false}));

  // One of relu's task files edited: both relu items are redone, rmsnorm's resumed.
  { std::ofstream(root / "tasks/relu/reference.cpp", std::ios::app) << "// edited\n"; }
  std::tie(asked, resumed) = rerun();
  EXPECT_EQ(asked, (std::vector<std::string>{"relu/canonical task's mode", "relu/large hot"}));
  EXPECT_EQ(resumed, (std::vector<bool>{false, false, true}));

  // A tuned table of another GPU: bench never reads it on the GPU the items ran on (the stand-in
  // runs name none), so nothing is redone.
  const fs::path tuned = root / "kernels/rmsnorm/tuned/rmsnorm_vec_regs";
  fs::create_directories(tuned);
  { std::ofstream(tuned / "H=4096,device_name=NVIDIA_H200,dtype=f32.json") << "{}\n"; }
  EXPECT_TRUE(rerun().first.empty());
  // One of that GPU: bench would take its configuration, so rmsnorm is redone.
  { std::ofstream(tuned / "H=4096,device_name=none,dtype=f32.json") << "{}\n"; }
  std::tie(asked, resumed) = rerun();
  EXPECT_EQ(asked, std::vector<std::string>{"rmsnorm/canonical task's mode"});
  EXPECT_EQ(resumed, (std::vector<bool>{true, true, false}));
  // One whose name states no device, or is not a table's name, may be read anywhere.
  { std::ofstream(tuned / "H=4096,dtype=f32.json") << "{}\n"; }
  EXPECT_EQ(rerun().first, std::vector<std::string>{"rmsnorm/canonical task's mode"});
  { std::ofstream(tuned / "notes.json") << "{}\n"; }
  EXPECT_EQ(rerun().first, std::vector<std::string>{"rmsnorm/canonical task's mode"});
  // A table of that GPU written while the case runs: the run may not have read it, so the case is
  // redone on the next resume.
  { std::ofstream(tuned / "notes.json", std::ios::app) << "\n"; }
  EXPECT_EQ(
      rerun([&] { std::ofstream(tuned / "H=4096,device_name=none,dtype=f32.json") << "\n"; }).first,
      std::vector<std::string>{"rmsnorm/canonical task's mode"});
  EXPECT_EQ(rerun().first, std::vector<std::string>{"rmsnorm/canonical task's mode"});
  EXPECT_TRUE(rerun().first.empty());

  // Items recorded without their device, as earlier portfolios recorded them, are held to the
  // tables of every GPU.
  const fs::path progress_path = portfolio_progress_file(records, s);
  json progress = json::parse(read_file(progress_path));
  for (auto& [key, done] : progress.at("done").items()) {
    EXPECT_EQ(done.at("device"), "none") << key;
    done.erase("device");
    done["sources_sha256"] = task_sources_sha256(root, key.substr(0, key.find('/'))).exact;
  }
  write_file_atomically(progress_path, progress.dump(1));
  EXPECT_TRUE(rerun().first.empty());
  { std::ofstream(tuned / "H=4096,device_name=NVIDIA_H200,dtype=f32.json", std::ios::app) << "\n"; }
  EXPECT_EQ(rerun().first, std::vector<std::string>{"rmsnorm/canonical task's mode"});

  // A progress file that recorded no sources (an older blaster's) is redone entirely.
  progress = json::parse(read_file(progress_path));
  for (auto& [key, done] : progress.at("done").items()) done.erase("sources_sha256");
  write_file_atomically(progress_path, progress.dump(1));
  EXPECT_EQ(rerun().first.size(), 3U);
}

// With every configuration timed, a tuned table changes nothing that runs: none counts in the
// items' sources, and the progress is another portfolio's than one that takes the tables.
TEST_F(Portfolio, WithEveryConfigurationTimedATableRedoesNothing) {
  const fs::path root =
      root_with({"tasks/relu", "tasks/rmsnorm", "kernels/relu", "kernels/rmsnorm"});
  store records(dir_ / "home");
  const suite s = two_tasks(root);
  auto rerun = [&](bool all_params) {
    portfolio_options options = options_at(root);
    options.all_params = all_params;
    fake_bench bench;
    static_cast<void>(run_portfolio(s, options, records, std::ref(bench)));
    return std::pair(bench.asked, bench.used_tuned);
  };
  auto [asked, used_tuned] = rerun(false);
  EXPECT_EQ(asked.size(), 3U);
  EXPECT_EQ(used_tuned, std::vector<bool>(3, true));
  std::tie(asked, used_tuned) = rerun(true);  // not the tabled portfolio's progress
  EXPECT_EQ(asked.size(), 3U);
  EXPECT_EQ(used_tuned, std::vector<bool>(3, false));
  EXPECT_TRUE(rerun(true).first.empty());

  const fs::path tuned = root / "kernels/rmsnorm/tuned/rmsnorm_vec_regs";
  fs::create_directories(tuned);
  { std::ofstream(tuned / "H=4096,device_name=none,dtype=f32.json") << "{}\n"; }
  EXPECT_TRUE(rerun(true).first.empty());
  { std::ofstream(root / "kernels/rmsnorm/rmsnorm_vec_regs.cu", std::ios::app) << "// edited\n"; }
  EXPECT_EQ(rerun(true).first, std::vector<std::string>{"rmsnorm/canonical task's mode"});
}

// Where there is no Triton a task's Triton candidate is left out of its bench, so it is not among
// the sources a recorded item holds for: adding one there redoes nothing, while editing a .cu
// candidate does.
TEST_F(Portfolio, ATritonCandidateLeftOutIsNotAmongTheSourcesAnItemHoldsFor) {
  const fs::path root = root_with({"tasks/rmsnorm", "kernels/rmsnorm"});
  compile_limits no_triton;
  no_triton.python = dir_ / "no-such-python";
  auto sources = [&] {
    return task_sources_sha256(root, "rmsnorm", std::nullopt, true, no_triton);
  };
  const task_sources before = sources();
  std::ofstream(root / "kernels/rmsnorm/rows_triton.py") << R"py("""blaster
{"launch": [{"kernel": "rows", "grid": "B", "args": ["out", "x"]}]}
"""
import triton
)py";
  EXPECT_EQ(sources().exact, before.exact);
  std::ofstream(root / "kernels/rmsnorm/rmsnorm_vec_regs.cu", std::ios::app) << "// edited\n";
  EXPECT_NE(sources().exact, before.exact);
}

// A shared header counts for the tasks whose candidates include it, and for no other; a task
// with a candidate whose includes are not known (refused) counts every one. An item recorded
// with every shared header in its digest, as earlier portfolios recorded it, still holds.
TEST_F(Portfolio, AResumeRedoesOnlyTheTasksThatIncludeAChangedSharedHeader) {
  const fs::path root = root_with(
      {"tasks/relu", "tasks/rmsnorm", "kernels/relu", "kernels/rmsnorm", "kernels/common"});
  auto append = [&](const char* file, const char* text) {
    std::ofstream(root / file, std::ios::app) << text;
  };
  append("kernels/rmsnorm/rmsnorm_vec_regs.cu", "#include \"common/warp_reduce.cuh\"\n");
  store records(dir_ / "home");
  const suite s = two_tasks(root);
  const portfolio_options options = options_at(root);
  auto asked = [&] {
    fake_bench bench;
    static_cast<void>(run_portfolio(s, options, records, std::ref(bench)));
    return bench.asked;
  };
  EXPECT_EQ(asked().size(), 3U);

  append("kernels/common/bf16_pack.cuh", "// edited\n");  // included by neither task
  EXPECT_TRUE(asked().empty());
  append("kernels/common/warp_reduce.cuh", "// edited\n");
  EXPECT_EQ(asked(), std::vector<std::string>{"rmsnorm/canonical task's mode"});

  // Recorded with every shared header: resumed, and rewritten with the exact digest.
  const fs::path progress_path = portfolio_progress_file(records, s);
  json progress = json::parse(read_file(progress_path));
  for (auto& [key, done] : progress.at("done").items()) {
    const std::string task = key.substr(0, key.find('/'));
    const task_sources now = task_sources_sha256(root, task);
    EXPECT_NE(now.exact, now.every_common_header);
    done["sources_sha256"] = now.every_common_header;
  }
  write_file_atomically(progress_path, progress.dump(1));
  EXPECT_TRUE(asked().empty());
  progress = json::parse(read_file(progress_path));
  EXPECT_EQ(progress.at("done").at("relu/large").at("sources_sha256"),
            task_sources_sha256(root, "relu").exact);

  // A candidate whose include is refused: relu now counts every shared header.
  append("kernels/relu/relu_refused.cu", "#include \"common/no_such_header.cuh\"\n");
  EXPECT_EQ(asked().size(), 2U);  // the new file itself
  const task_sources relu = task_sources_sha256(root, "relu");
  EXPECT_EQ(relu.exact, relu.every_common_header);
  append("kernels/common/bf16_pack.cuh", "// edited again\n");
  EXPECT_EQ(asked(), (std::vector<std::string>{"relu/canonical task's mode", "relu/large hot"}));
}

// A portfolio in shards: each shard's home holds its share of the entries, its runs numbered
// apart; merged, they resume as one portfolio that benches nothing and writes a bundle that
// verifies.
TEST_F(Portfolio, ShardsMergeIntoOneHomeThatWritesTheWholeBundle) {
  const suite s = two_tasks();
  const portfolio_options options = options_at();
  std::vector<std::string> asked;
  for (int shard : {1, 2}) {
    store home(dir_ / fmt::format("shard{}", shard));
    home.number_runs_from(shard_first_run_id(shard));
    portfolio_options o = options;
    o.shard = shard;
    o.shards = 2;
    fake_bench bench;
    static_cast<void>(run_portfolio(s, o, home, std::ref(bench)));
    asked.insert(asked.end(), bench.asked.begin(), bench.asked.end());
  }
  // Whole entries per shard: relu's two cases in the first, rmsnorm's in the second.
  EXPECT_EQ(asked, (std::vector<std::string>{"relu/canonical task's mode", "relu/large hot",
                                             "rmsnorm/canonical task's mode"}));

  store merged(dir_ / "merged");
  for (int shard : {1, 2}) {
    const fs::path from = dir_ / fmt::format("shard{}", shard);
    EXPECT_TRUE(merge_home(merged, from).conflicts.empty());
    const progress_merge p = merge_portfolio_progress(merged, from);
    EXPECT_TRUE(p.conflicts.empty());
    EXPECT_EQ(p.items_added, shard == 1 ? 2 : 1);
  }
  fake_bench none;
  const auto outcomes = run_portfolio(s, options, merged, std::ref(none));
  EXPECT_TRUE(none.asked.empty()) << "every case is resumed from the merged store";
  ASSERT_EQ(outcomes.size(), 3U);
  EXPECT_EQ(outcomes[0].run_id, 1'000'000);
  EXPECT_EQ(outcomes[1].run_id, 1'000'001);
  EXPECT_EQ(outcomes[2].run_id, 2'000'000);
  const json summary = summarize_portfolio(s, outcomes, json());
  const fs::path out = dir_ / "merged-bundle";
  write_portfolio_bundle(merged, s, outcomes, summary, json(), out, nullptr);
  const bundle_verification v = verify_bundle(out, nullptr);
  EXPECT_TRUE(v.ok()) << (v.problems.empty() ? "" : v.problems[0].detail);

  // Merging a shard again changes nothing, whatever kind of sources digest either side holds
  // (task_sources); an item another run recorded here is named.
  {
    const fs::path shard1 = portfolio_progress_file(store(dir_ / "shard1"), s);
    json progress = json::parse(read_file(shard1));
    for (auto& [key, done] : progress.at("done").items()) done["sources_sha256"] = "another kind";
    write_file_atomically(shard1, progress.dump(1));
  }
  const progress_merge again = merge_portfolio_progress(merged, dir_ / "shard1");
  EXPECT_EQ(again.items_added, 0);
  EXPECT_TRUE(again.conflicts.empty()) << again.conflicts.front();
  {
    store other(dir_ / "other");
    other.number_runs_from(shard_first_run_id(1));
    portfolio_options o = options;
    o.shard = 1;
    o.shards = 2;
    fake_bench bench;
    bench.candidate_us = 4.0;  // other runs, other reports, under the same ids
    static_cast<void>(run_portfolio(s, o, other, std::ref(bench)));
  }
  EXPECT_EQ(merge_home(merged, dir_ / "other").conflicts.size(), 2U);
  const progress_merge clash = merge_portfolio_progress(merged, dir_ / "other");
  EXPECT_EQ(clash.items_added, 0);
  ASSERT_EQ(clash.conflicts.size(), 2U);
  EXPECT_NE(clash.conflicts[0].find("recorded here by run 1000000, in"), std::string::npos)
      << clash.conflicts[0];
}

TEST_F(Portfolio, OnTwoGpusEachTaskRunsWholeOnOneOfThemAndTheTasksRunSideBySide) {
  const suite s = two_tasks();
  const portfolio_options options = on_two_gpus();
  store records(dir_ / "home");
  std::mutex asking;
  fake_bench inner;
  std::map<std::string, std::pair<std::vector<int>, const store*>> on;  // task/case: GPU, store
  std::atomic<int> running{0};
  std::atomic<int> most{0};
  auto bench = [&](const bench_options& o, store& db, warm_bench& series) {
    const int now = ++running;
    most = std::max(most.load(), now);
    // Long enough that the other GPU takes its task before this one ends.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const std::lock_guard lock(asking);
    on[o.task + "/" + o.timed_case] = {o.gpus.ordinals, &db};
    bench_report r = inner(o, db, series);
    --running;
    return r;
  };
  const auto outcomes = run_portfolio(s, options, records, bench);
  EXPECT_EQ(most.load(), 2) << "the two tasks ran side by side";
  ASSERT_EQ(on.size(), 3U);
  // A task's cases are one series on one GPU, through that GPU's own connection to the home.
  EXPECT_EQ(on["relu/canonical"], on["relu/large"]);
  ASSERT_EQ(on["relu/canonical"].first.size(), 1U);
  ASSERT_EQ(on["rmsnorm/canonical"].first.size(), 1U);
  EXPECT_NE(on["relu/canonical"].first, on["rmsnorm/canonical"].first);
  EXPECT_NE(on["relu/canonical"].second, on["rmsnorm/canonical"].second);
  EXPECT_NE(on["relu/canonical"].second, &records);
  // The outcomes in the suite's order, every run in the one home, each under an id of its own.
  ASSERT_EQ(outcomes.size(), 3U);
  EXPECT_EQ(outcomes[0].item.key(), "relu/canonical");
  EXPECT_EQ(outcomes[1].item.key(), "relu/large");
  EXPECT_EQ(outcomes[2].item.key(), "rmsnorm/canonical");
  std::set<std::int64_t> ids;
  for (const auto& o : outcomes) {
    ids.insert(o.run_id);
    statement run = records.db().prepare("SELECT status FROM runs WHERE id = ?1");
    run.bind(1, o.run_id);
    ASSERT_TRUE(run.step()) << o.run_id;
    EXPECT_EQ(run.column_text(0), "completed");
  }
  EXPECT_EQ(ids.size(), 3U);
  // The progress names all three: a portfolio started again redoes nothing, and looks for no GPU.
  fake_bench none;
  portfolio_options resumed = options_at();
  resumed.choose_gpus = []() -> std::vector<gpu_lane> {
    throw cuda::gpu_unavailable("no GPU here");
  };
  const auto again = run_portfolio(s, resumed, records, std::ref(none));
  EXPECT_TRUE(none.asked.empty());
  ASSERT_EQ(again.size(), 3U);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(again[i].run_id, outcomes[i].run_id);
}

// --recorded: the bundle of the cases recorded so far, benching nothing and looking for no GPU;
// the report names the cases not run yet, and its means are those of the recorded ones.
TEST_F(Portfolio, RecordedOnlyBenchesNothingAndTheReportNamesTheCasesNotRunYet) {
  const suite s = two_tasks();
  store records(dir_ / "home");
  fake_bench first;
  first.fail_at = "rmsnorm/canonical";  // killed there: relu's two cases are recorded
  EXPECT_THROW(static_cast<void>(run_portfolio(s, options_at(), records, std::ref(first))),
               std::runtime_error);

  fake_bench none;
  portfolio_options recorded = options_at();
  recorded.recorded_only = true;
  recorded.choose_gpus = []() -> std::vector<gpu_lane> {
    throw cuda::gpu_unavailable("no GPU here");
  };
  const auto outcomes = run_portfolio(s, recorded, records, std::ref(none));
  EXPECT_TRUE(none.asked.empty());
  ASSERT_EQ(outcomes.size(), 2U);
  EXPECT_EQ(outcomes[0].item.key(), "relu/canonical");
  EXPECT_EQ(outcomes[1].item.key(), "relu/large");
  EXPECT_TRUE(outcomes[0].resumed);

  const auto items = portfolio_items(s);
  ASSERT_EQ(items.size(), 3U);
  const json summary = summarize_portfolio(s, outcomes, json(), {items[2]});
  EXPECT_EQ(summary.at("rows").size(), 2U);
  EXPECT_EQ(summary.at("not_run"),
            json::parse(R"([{"id": "036", "task": "rmsnorm", "case": "canonical"}])"));
  const std::string md = render_portfolio_markdown(summary);
  EXPECT_NE(md.find("Partial: 2 of the 3 cases are recorded; not run yet: 036 rmsnorm canonical."),
            std::string::npos)
      << md;
  // A whole portfolio's results say nothing of cases not run.
  EXPECT_FALSE(summarize_portfolio(s, outcomes, json()).contains("not_run"));
  EXPECT_EQ(render_portfolio_markdown(summarize_portfolio(s, outcomes, json())).find("Partial"),
            std::string::npos);

  // A shard's items are its entries' cases alone.
  const auto second = portfolio_items(s, 2, 2);
  ASSERT_EQ(second.size(), 1U);
  EXPECT_EQ(second[0].key(), "rmsnorm/canonical");
}

// On several GPUs the tasks with the most cases start first, so that a long task does not run
// alone at the end; the outcomes still come back in the suite's order.
TEST_F(Portfolio, OnTwoGpusTheTaskWithTheMostCasesStartsFirst) {
  const auto file = write("three.json", R"({
      "name": "three", "title": "three tasks",
      "entries": [
        {"id": "a", "task": "rmsnorm", "cases": [{"case": "canonical"}]},
        {"id": "b", "task": "gelu", "cases": [{"case": "canonical"}]},
        {"id": "c", "task": "relu", "cases": [{"case": "canonical"}, {"case": "large"}]}]})");
  const suite s = load_suite(BLASTER_SOURCE_DIR, file.string());
  store records(dir_ / "home");
  std::mutex asking;
  fake_bench inner;
  std::vector<std::string> started;
  auto bench = [&](const bench_options& o, store& db, warm_bench& series) {
    {
      const std::lock_guard lock(asking);
      started.push_back(o.task + "/" + o.timed_case);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    const std::lock_guard lock(asking);
    return inner(o, db, series);
  };
  const auto outcomes = run_portfolio(s, on_two_gpus(), records, bench);
  // relu's two cases and rmsnorm's one start at once; gelu waits for rmsnorm's GPU.
  ASSERT_EQ(started.size(), 4U);
  const auto at = [&](const std::string& key) {
    return std::find(started.begin(), started.end(), key) - started.begin();
  };
  EXPECT_LT(at("relu/canonical"), at("gelu/canonical"));
  EXPECT_LT(at("rmsnorm/canonical"), at("gelu/canonical"));
  ASSERT_EQ(outcomes.size(), 4U);
  EXPECT_EQ(outcomes[0].item.key(), "rmsnorm/canonical");
  EXPECT_EQ(outcomes[1].item.key(), "gelu/canonical");
  EXPECT_EQ(outcomes[2].item.key(), "relu/canonical");
}

TEST_F(Portfolio, AGpuThatFailsStopsThePortfolioAndKeepsWhatTheOtherRecorded) {
  const suite s = two_tasks();
  // Picked once there is work, as --gpus picks them.
  portfolio_options options = options_at();
  options.choose_gpus = [] { return on_two_gpus().gpus; };
  store records(dir_ / "home");
  std::mutex asking;
  fake_bench inner;
  auto bench = [&](const bench_options& o, store& db, warm_bench& series) {
    if (o.task == "rmsnorm") {
      bench_report lost;
      lost.gpu_unavailable = "the GPU fell off the bus";
      return lost;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const std::lock_guard lock(asking);
    return inner(o, db, series);
  };
  EXPECT_THROW(static_cast<void>(run_portfolio(s, options, records, bench)), cuda::gpu_unavailable);
  // The other GPU finished the task it was in; a portfolio started again resumes it.
  fake_bench resumed;
  const auto outcomes = run_portfolio(s, options_at(), records, std::ref(resumed));
  ASSERT_EQ(outcomes.size(), 3U);
  EXPECT_TRUE(outcomes[0].resumed);
  EXPECT_NE(std::find(resumed.asked.begin(), resumed.asked.end(), "rmsnorm/canonical task's mode"),
            resumed.asked.end());
}

// Served sizes: the bandwidth goal holds at each entry's largest case only, at the entry's own
// percentage where it names one, and a missed goal says what the counters found. A roofline goal
// holds at every case (attention's at one long sequence as at many short ones).
TEST_F(Portfolio, TheBandwidthGoalHoldsAtTheLargestCaseWithTheEntrysPercentageAndItsDiagnosis) {
  store records(dir_ / "home");
  const auto file = write("served.json", R"({
      "name": "served", "title": "one task at two sizes",
      "protocol": {"sessions": 5, "profile": true},
      "entries": [
        {"id": "s1", "task": "relu", "bandwidth_goal_pct": 95,
         "cases": [{"case": "canonical"}, {"case": "large", "mode": "hot"}]},
        {"id": "s2", "task": "rmsnorm", "roofline_goal_pct": 75,
         "cases": [{"case": "canonical", "mode": "hot"}, {"case": "large", "mode": "hot"}]}
      ]})");
  const suite s = load_suite(BLASTER_SOURCE_DIR, file.string());
  EXPECT_TRUE(s.protocol.profile);
  EXPECT_EQ(s.entries[0].bandwidth_goal_pct, std::optional<double>(95.0));
  fake_bench bench;
  const auto outcomes = run_portfolio(s, options_at(), records, std::ref(bench));
  const json summary = summarize_portfolio(s, outcomes, json());
  const json& rows = summary.at("rows");
  ASSERT_EQ(rows.size(), 4U);
  auto bandwidth_goals = [](const json& row) {
    json out = json::array();
    for (const auto& g : row.at("goals")) {
      const std::string goal = g.at("goal");
      if (goal.find("copy bandwidth") != std::string::npos ||
          goal.find("roofline floor") != std::string::npos) {
        out.push_back(g);
      }
    }
    return out;
  };
  EXPECT_TRUE(bandwidth_goals(rows[0]).empty()) << "the smaller case is not held to it";
  const json large = bandwidth_goals(rows[1]);
  ASSERT_EQ(large.size(), 1U);
  EXPECT_FALSE(large[0].at("met").get<bool>()) << "90% is short of the entry's 95%";
  EXPECT_NE(large[0].at("goal").get<std::string>().find("95%"), std::string::npos);
  EXPECT_EQ(rows[1].at("best").at("diagnosis"), "latency-bound; long_scoreboard 70%");
  // The second entry is held to its roofline floor instead, at both cases: 80% meets 75%.
  for (const std::size_t row : {2U, 3U}) {
    const json floor = bandwidth_goals(rows[row]);
    ASSERT_EQ(floor.size(), 1U) << rows[row].at("case");
    EXPECT_NE(floor[0].at("goal").get<std::string>().find("75% of the roofline floor"),
              std::string::npos);
    EXPECT_TRUE(floor[0].at("met").get<bool>());
    EXPECT_EQ(floor[0].at("by"), "80.0%");
  }
  const std::string md = render_portfolio_markdown(summary);
  EXPECT_NE(md.find("s1 relu case large: missed \"at least 95% of the copy bandwidth at the "
                    "entry's largest case\" (90.0%); latency-bound; long_scoreboard 70%"),
            std::string::npos)
      << md;
  EXPECT_EQ(summary.at("protocol").at("profile"), true);
}

// An op whose bytes move in less time than an empty kernel takes (a router's few kilobytes) can
// show no bandwidth: its largest case is held against PyTorch alone, and the report says why.
TEST_F(Portfolio, NoBandwidthGoalWhereTheFloorIsBelowAnEmptyKernel) {
  store records(dir_ / "home");
  const auto file = write("tiny.json", R"({
      "name": "tiny", "title": "a task whose floor is below the launch",
      "entries": [{"id": "t1", "task": "relu", "cases": [{"case": "large", "mode": "hot"}]}]})");
  const suite s = load_suite(BLASTER_SOURCE_DIR, file.string());
  fake_bench bench;
  bench.candidate_us = 2.0;  // its floor 1.6 us, an empty kernel 4 us (hot)
  const auto outcomes = run_portfolio(s, options_at(), records, std::ref(bench));
  const json summary = summarize_portfolio(s, outcomes, json());
  const json& row = summary.at("rows").at(0);
  for (const auto& g : row.at("goals")) {
    EXPECT_EQ(g.at("goal").get<std::string>().find("copy bandwidth"), std::string::npos) << g;
  }
  EXPECT_EQ(row.at("no_bandwidth_goal"),
            "its roofline floor, 1.60 us, is below an empty kernel's 4.00 us (hot)");
  const std::string md = render_portfolio_markdown(summary);
  EXPECT_NE(md.find("- t1 relu case large: no bandwidth goal, its roofline floor"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| 80.0% |"), std::string::npos) << md;  // % roof: the floor over the time
}

// Cases from several GPUs (--gpus, shards merged): one model's are one report that names the
// GPUs; two models' are refused, since a mean over them would compare hardware.
TEST_F(Portfolio, AReportNamesItsGpusAndRefusesTwoModels) {
  store records(dir_ / "home");
  const suite s = two_tasks();
  fake_bench bench;
  auto outcomes = run_portfolio(s, options_at(), records, std::ref(bench));
  ASSERT_EQ(outcomes.size(), 3U);
  auto on = [&](std::size_t i, const std::string& name, const std::string& uuid) {
    outcomes[i].report.device = cuda::device_properties{};
    outcomes[i].report.device->name = name;
    outcomes[i].report.device->uuid = uuid;
  };
  on(0, "NVIDIA H200", "GPU-aa");
  on(1, "NVIDIA H200", "GPU-aa");
  on(2, "NVIDIA H200", "GPU-bb");
  const json summary = summarize_portfolio(s, outcomes, json());
  EXPECT_EQ(summary.at("device").at("gpus"), (json{"GPU-aa", "GPU-bb"}));
  EXPECT_NE(render_portfolio_markdown(summary).find("ran on 2 GPUs of this model (UUIDs GPU-aa, "
                                                    "GPU-bb)"),
            std::string::npos);
  on(2, "NVIDIA A100", "GPU-cc");
  try {
    static_cast<void>(summarize_portfolio(s, outcomes, json()));
    ADD_FAILURE() << "two models were summarized as one";
  } catch (const input_error& e) {
    EXPECT_NE(std::string(e.what()).find("NVIDIA A100 (1 case), NVIDIA H200 (2 cases)"),
              std::string::npos)
        << e.what();
  }
  on(2, "NVIDIA H200", "GPU-aa");
  EXPECT_FALSE(summarize_portfolio(s, outcomes, json()).at("device").contains("gpus"));
}

// PyTorch's times measured on another model than the cases' are refused, not divided.
TEST_F(Portfolio, PyTorchTimesOfAnotherGpuModelAreRefused) {
  store records(dir_ / "home");
  const suite s = two_tasks();
  fake_bench bench;
  auto outcomes = run_portfolio(s, options_at(), records, std::ref(bench));
  for (auto& o : outcomes) {
    o.report.device = cuda::device_properties{};
    o.report.device->name = "NVIDIA H100 80GB HBM3";
  }
  const json torch = {{"environment", {{"device", "NVIDIA H200"}}}, {"cases", json::array()}};
  try {
    static_cast<void>(summarize_portfolio(s, outcomes, torch));
    ADD_FAILURE() << "PyTorch's H200 times were held against H100 cases";
  } catch (const input_error& e) {
    EXPECT_NE(std::string(e.what()).find("measured on an NVIDIA H200, its cases on an NVIDIA "
                                         "H100 80GB HBM3"),
              std::string::npos)
        << e.what();
  }
  json same = torch;
  same["environment"]["device"] = "NVIDIA H100 80GB HBM3";
  EXPECT_EQ(summarize_portfolio(s, outcomes, same).at("pytorch").at("device"),
            "NVIDIA H100 80GB HBM3");
}

TEST_F(Portfolio, ABadGoalOrProfileIsRefusedWhereItIs) {
  auto refused = [&](const std::string& entry, const std::string& protocol) {
    const auto file = write("bad.json", R"({"name": "b", "title": "t", "protocol": {)" + protocol +
                                            R"(}, "entries": [{"id": "1", "task": "relu", )" +
                                            entry + R"("cases": [{"case": "canonical"}]}]})");
    try {
      static_cast<void>(load_suite(BLASTER_SOURCE_DIR, file.string()));
    } catch (const input_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(refused(R"("bandwidth_goal_pct": 120, )", "").find("entries[0].bandwidth_goal_pct"),
            std::string::npos);
  EXPECT_NE(refused("", R"("profile": "yes")").find("protocol.profile: must be true or false"),
            std::string::npos);
  EXPECT_NE(refused(R"("bandwidth_goal_pct": 85, "roofline_goal_pct": 80, )", "")
                .find("name one goal for the largest case"),
            std::string::npos);
}

TEST_F(Portfolio, TheReportChecksEveryGoalAndTheBundleVerifies) {
  store records(dir_ / "home");
  const suite s = two_tasks();
  fake_bench bench;
  bench.candidate_us = 5.0;
  const auto outcomes = run_portfolio(s, options_at(), records, std::ref(bench));
  const json pytorch = json::parse(R"({"environment": {"torch": "2.11"}, "cases": [
      {"task": "relu", "case": "canonical",
       "methods": {"eager": {"hot_us": 6.0, "status": "ok"}, "compile": {"status": "failed: InductorError: boom\n  File \"x.py\", line 1 | 2\nAssertionError"}}},
      {"task": "rmsnorm", "case": "canonical",
       "methods": {"eager": {"hot_us": 2.5, "status": "ok"}, "compile": {"hot_us": 20.0, "status": "ok"}}}]})");
  const json summary = summarize_portfolio(s, outcomes, pytorch);
  const json& rows = summary.at("rows");
  ASSERT_EQ(rows.size(), 3U);
  EXPECT_EQ(rows[0].at("best").at("variant"), "fast");
  EXPECT_DOUBLE_EQ(rows[0].at("pytorch").at("eager").at("ratio").get<double>(), 6.0 / 5.0);
  EXPECT_TRUE(rows[0].at("pytorch").at("compile").at("status").get<std::string>().starts_with(
      "failed: InductorError: boom\n"));
  // rmsnorm: 90% of the copy bandwidth meets its goal; PyTorch eager at 2.5 us beats 5 us.
  bool bandwidth_met = false;
  bool pytorch_missed = false;
  for (const auto& g : rows[2].at("goals")) {
    const std::string goal = g.at("goal");
    if (goal.find("copy bandwidth") != std::string::npos) bandwidth_met = g.at("met");
    if (goal.find("PyTorch") != std::string::npos) pytorch_missed = !g.at("met").get<bool>();
  }
  EXPECT_TRUE(bandwidth_met);
  EXPECT_TRUE(pytorch_missed);
  EXPECT_NEAR(summary.at("geometric_means").at("speedup_over_baseline").get<double>(), 2.0, 1e-12);
  // Each case names the harness revision that measured it; the report names them all.
  EXPECT_EQ(rows[0].at("blaster_revision"), "0123abc");
  EXPECT_EQ(summary.at("blaster_revisions"), json::array({"0123abc"}));
  const std::string md = render_portfolio_markdown(summary);
  EXPECT_NE(md.find("Measured by blaster at revision 0123abc"), std::string::npos) << md;
  // A failed method's traceback stays out of the table: its cell points to a note of one line.
  EXPECT_NE(md.find("| 1.20 | failed [1] |"), std::string::npos) << md;
  EXPECT_NE(md.find("\n1. 019 relu canonical compile: InductorError: boom\n"), std::string::npos)
      << md;
  EXPECT_EQ(md.find("x.py"), std::string::npos) << md;
  EXPECT_NE(
      md.find("036 rmsnorm case canonical: missed \"at least as fast as the faster of PyTorch"),
      std::string::npos)
      << md;
  EXPECT_NE(render_portfolio_svg(summary).find("<svg"), std::string::npos);

  const fs::path out = dir_ / "bundle";
  write_portfolio_bundle(records, s, outcomes, summary, pytorch, out, nullptr);
  for (const char* file : {"report.md", "results.json", "figure.svg", "suite.json", "pytorch.json",
                           "runs/036-rmsnorm-canonical/SHA256SUMS"}) {
    EXPECT_TRUE(fs::exists(out / file)) << file;
  }
  // The runs keep their objects in one folder, each once: a task's sources serve all its cases.
  EXPECT_TRUE(fs::is_directory(out / "objects"));
  for (const auto& run : fs::directory_iterator(out / "runs")) {
    EXPECT_FALSE(fs::exists(run.path() / "objects")) << run.path();
  }
  bundle_verification clean = verify_bundle(out, nullptr);
  check_run_records(clean);
  check_portfolio_claims(clean);
  EXPECT_TRUE(clean.ok()) << (clean.problems.empty() ? "" : clean.problems[0].detail);

  // A number of the report edited, and SHA256SUMS rewritten to match: the hashes hold, the
  // claim does not, since the run it cites says otherwise.
  {
    const fs::path forged = dir_ / "forged";
    fs::copy(out, forged, fs::copy_options::recursive);
    json edited = json::parse(read_file(forged / "results.json"));
    edited["rows"][2]["best"]["time_us"] = 4.0;
    write_file_atomically(forged / "results.json", edited.dump(1) + "\n");
    std::string sums = read_file(forged / "SHA256SUMS");
    const std::string old_digest = sha256_file_hex(out / "results.json");
    sums.replace(sums.find(old_digest), old_digest.size(),
                 sha256_file_hex(forged / "results.json"));
    write_file_atomically(forged / "SHA256SUMS", sums);
    bundle_verification v = verify_bundle(forged, nullptr);
    EXPECT_TRUE(v.ok());
    check_portfolio_claims(v);
    ASSERT_EQ(v.problems.size(), 1U);
    EXPECT_EQ(v.problems[0].kind, bundle_problem_kind::claim);
    EXPECT_NE(v.problems[0].detail.find("best.time_us is 4.0 but runs/036-rmsnorm-canonical"),
              std::string::npos)
        << v.problems[0].detail;
  }

  // One byte of one run's evidence changed: the bundle no longer holds.
  const fs::path results = out / "runs/019-relu-large/results.json";
  std::string bytes = read_file(results);
  bytes[bytes.size() / 2] ^= 1;
  { std::ofstream(results, std::ios::binary) << bytes; }
  const auto after = verify_bundle(out, nullptr);
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.problems.at(0).path, "runs/019-relu-large/results.json");
  // A bundle is never written over anything.
  EXPECT_THROW(write_portfolio_bundle(records, s, outcomes, summary, pytorch, out, nullptr),
               input_error);
}

// The tables a bundle carries are those its own runs measured: each entry names its run and is
// the fastest configuration that run confirmed, at the time it took. A table that says more than
// its run is refused when the bundle is written, and found by verify when it is forged after.
TEST_F(Portfolio, TheBundleCarriesTheTunedTablesItsRunsMeasuredAndVerifyHoldsThemToTheirRuns) {
  store records(dir_ / "home");
  const suite s = two_tasks();
  fake_bench bench;
  const auto outcomes = run_portfolio(s, options_at(), records, std::ref(bench));
  const auto rmsnorm = std::find_if(outcomes.begin(), outcomes.end(), [](const auto& o) {
    return o.item.key() == "rmsnorm/canonical";
  });
  ASSERT_NE(rmsnorm, outcomes.end());
  const std::int64_t run = rmsnorm->run_id;
  // The fake runs name no device and time shape n=1: the table of that shape is keyed by n.
  const std::string name = "device_name=none,dtype=f16.json";
  const fs::path tables = dir_ / "tables";
  auto table_with = [&](const std::string& entry, const std::string& candidate,
                        const std::string& file) {
    const fs::path path = tables / "rmsnorm" / "tuned" / fs::path(candidate).stem() / file;
    fs::create_directories(path.parent_path());
    write_file_atomically(path, fmt::format(R"({{"1": {}, "candidate": "{}", "task": "rmsnorm"}})",
                                            entry, candidate));
    return path;
  };
  auto refusal = [&](const std::string& entry, const std::string& candidate = "fast.cu") {
    fs::remove_all(tables);
    table_with(entry, candidate, name);
    try {
      static_cast<void>(tables_for_bundle(tables, outcomes));
    } catch (const input_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string honest = fmt::format(R"({{"time_us": 5.0, "run_id": {}}})", run);
  EXPECT_NE(refusal(fmt::format(R"({{"time_us": 4.0, "run_id": {}}})", run))
                .find(fmt::format("entry 1: its time is 4 us but run {} timed fast at 5 us", run)),
            std::string::npos);
  EXPECT_NE(refusal(R"({"time_us": 5.0, "run_id": 999})")
                .find("entry 1: run 999 is not one of this portfolio's"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"time_us": 5.0})").find("entry 1: names no run"), std::string::npos);
  EXPECT_NE(refusal(honest, "slow.cu").find(fmt::format("run {} has no variant of slow", run)),
            std::string::npos);
  const std::int64_t relu_run = outcomes.front().run_id;  // relu's: another task's run
  EXPECT_NE(refusal(fmt::format(R"({{"time_us": 5.0, "run_id": {}}})", relu_run))
                .find(fmt::format("run {} is of task relu, not rmsnorm", relu_run)),
            std::string::npos);
  {
    fs::remove_all(tables);
    fs::create_directories(tables / "rmsnorm/tuned/fast");
    write_file_atomically(tables / "rmsnorm/tuned/fast" / name,
                          fmt::format(R"({{"1": {}, "candidate": "slow.cu"}})", honest));
    try {
      static_cast<void>(tables_for_bundle(tables, outcomes));
      ADD_FAILURE() << "a table in another candidate's folder went in";
    } catch (const input_error& e) {
      EXPECT_NE(std::string(e.what()).find("is the table of slow.cu, in the folder of fast"),
                std::string::npos)
          << e.what();
    }
  }
  {
    fs::remove_all(tables);
    const fs::path moved = tables / "rmsnorm" / "tuned" / "fast" / name;
    fs::create_directories(moved.parent_path());
    write_file_atomically(moved, fmt::format(R"({{"2": {}, "candidate": "fast.cu"}})", honest));
    EXPECT_THROW(static_cast<void>(tables_for_bundle(tables, outcomes)), input_error)
        << "an entry moved to a size its run did not time";
  }

  // The honest table goes in; another GPU's table is left out.
  fs::remove_all(tables);
  table_with(honest, "fast.cu", name);
  table_with(R"({"time_us": 1.0})", "fast.cu", "device_name=NVIDIA_H200,dtype=f16.json");
  const std::vector<bundle_table> found = tables_for_bundle(tables, outcomes);
  ASSERT_EQ(found.size(), 1U);
  EXPECT_EQ(found[0].path, "kernels/rmsnorm/tuned/fast/" + name);
  json summary = summarize_portfolio(s, outcomes, json());
  summary["tuned_tables"] = tuned_tables_json(found);
  EXPECT_NE(
      render_portfolio_markdown(summary).find(fmt::format(
          "- `kernels/rmsnorm/tuned/fast/{}`: 1:  5.00 us (default - us; run {})", name, run)),
      std::string::npos)
      << render_portfolio_markdown(summary);
  const fs::path out = dir_ / "bundle";
  write_portfolio_bundle(records, s, outcomes, summary, json(), out, nullptr, found);
  EXPECT_EQ(read_file(out / found[0].path), read_file(tables / "rmsnorm/tuned/fast" / name));
  bundle_verification clean = verify_bundle(out, nullptr);
  check_portfolio_claims(clean);
  EXPECT_TRUE(clean.ok()) << (clean.problems.empty() ? "" : clean.problems[0].detail);

  // Forged after, SHA256SUMS rewritten to match: the hashes hold, the table's claims do not.
  auto forged_with = [&](const std::string& file, const std::string& bytes) {
    const fs::path forged = dir_ / "forged";
    fs::remove_all(forged);
    fs::copy(out, forged, fs::copy_options::recursive);
    fs::create_directories((forged / file).parent_path());
    write_file_atomically(forged / file, bytes);
    std::string sums = read_file(forged / "SHA256SUMS");
    if (const auto at = sums.find("  " + file + "\n"); at != std::string::npos) {
      sums.replace(at - 64, 64, sha256_file_hex(forged / file));
    } else {
      sums += sha256_file_hex(forged / file) + "  " + file + "\n";
    }
    write_file_atomically(forged / "SHA256SUMS", sums);
    bundle_verification v = verify_bundle(forged, nullptr);
    EXPECT_TRUE(v.ok()) << (v.problems.empty() ? "" : v.problems[0].detail);
    check_portfolio_claims(v);
    return v;
  };
  {
    const auto v =
        forged_with(found[0].path, fmt::format(R"({{"1": {{"time_us": 4.5, "run_id": {}}}, )"
                                               R"("candidate": "fast.cu"}})",
                                               run));
    ASSERT_EQ(v.problems.size(), 1U);
    EXPECT_EQ(v.problems[0].kind, bundle_problem_kind::claim);
    EXPECT_EQ(v.problems[0].path, found[0].path);
    EXPECT_NE(v.problems[0].detail.find("entry 1: its time is 4.5 us"), std::string::npos)
        << v.problems[0].detail;
  }
  {
    // A table added where no run stands behind it, under another candidate's folder.
    const auto v = forged_with("kernels/rmsnorm/tuned/slow/" + name,
                               fmt::format(R"({{"1": {}, "candidate": "fast.cu"}})", honest));
    ASSERT_EQ(v.problems.size(), 1U);
    EXPECT_NE(v.problems[0].detail.find("is the table of fast.cu, in the folder of slow"),
              std::string::npos)
        << v.problems[0].detail;
  }
  {
    const auto v = forged_with("kernels/rmsnorm/notes.txt", "trust me\n");
    ASSERT_EQ(v.problems.size(), 1U);
    EXPECT_NE(v.problems[0].detail.find("is not a tuned table"), std::string::npos);
  }
}

// An entry is the fastest configuration its run confirmed: not a slower one, and not one that
// the run screened out after one session, however fast that session was.
TEST(PortfolioTables, AnEntryIsTheFastestConfigurationItsRunConfirmed) {
  bench_report run;
  run.run_id = 7;
  run.task = "swiglu";
  run.timed_shape = "T=16 I=14336";
  auto variant = [](const std::string& vec, double us, bool screened) {
    variant_result r;
    r.candidate = "swiglu_packs";
    r.label = "swiglu_packs[VEC=" + vec + "]";
    r.params = {{"VEC", vec}};
    r.status = "passed";
    r.time_us = us;
    r.screened = screened;
    return r;
  };
  run.results = {variant("2", 3.0, /*screened=*/true), variant("4", 4.0, false),
                 variant("8", 5.0, false)};
  const std::map<std::int64_t, const bench_report*> runs = {{7, &run}};
  auto problems_of = [&](const std::string& vec, double us, const std::string& shape = "14336") {
    tuned_table t;
    t.key = {{"I", shape}, {"device_name", "none"}, {"dtype", "bf16"}};
    t.about = {{"candidate", "swiglu_packs.cu"}};
    t.entries = {{.size = 16,
                  .params = {{"VEC", vec}},
                  .time_us = us,
                  .interval_us = {},
                  .default_time_us = {},
                  .run_id = 7}};
    const auto problems = table_claim_problems(t, "swiglu", runs);
    return problems.empty() ? std::string("holds") : problems.front();
  };
  EXPECT_EQ(problems_of("4", 4.0), "holds");
  EXPECT_EQ(problems_of("8", 5.0), "entry 16: run 7 confirmed swiglu_packs[VEC=4] faster, at 4 us");
  EXPECT_EQ(problems_of("2", 3.0),
            "entry 16: run 7 did not confirm swiglu_packs[VEC=2] (screened out)");
  EXPECT_EQ(problems_of("4", 4.0, "28672"),
            "entry 16: run 7 timed I=14336, the table's shape has 28672");
}

// The fake bench, with the device and a candidate's source and samples recorded as a run records
// them: the runs' bundles then cite objects, kept in the portfolio's objects/.
struct recording_bench {
  fake_bench inner;

  bench_report operator()(const bench_options& o, store& records, warm_bench& warm) {
    bench_report r = inner(o, records, warm);
    records.set_run_device(r.run_id,
                           records.record_device(device_fingerprint{.name = "NVIDIA H200",
                                                                    .uuid = "GPU-test",
                                                                    .compute_capability = "9.0",
                                                                    .arch = "sm_90a"}));
    records.record_variant_result(
        r.run_id,
        variant_result_record{.candidate = "fast",
                              .variant = "fast",
                              .case_name = o.timed_case,
                              .status = "passed",
                              .source_sha256 = records.cas().put("// fast " + o.task),
                              .samples_sha256 = records.cas().put("samples of " + o.command),
                              .metrics = {{"time_us", inner.candidate_us}}});
    return r;
  }
};

// SHA256SUMS computed again over the files it lists that are still there, as a forger would.
void resum(const fs::path& bundle) {
  std::vector<sha256sums_entry> manifest;
  for (auto& entry : parse_sha256sums(read_file(bundle / "SHA256SUMS"))) {
    if (!fs::exists(bundle / entry.path)) continue;
    entry.sha256 = sha256_file_hex(bundle / entry.path);
    manifest.push_back(std::move(entry));
  }
  write_file_atomically(bundle / "SHA256SUMS", format_sha256sums(manifest));
}

// Each file of a bundle by its digest, as its SHA256SUMS lists them.
std::map<std::string, std::string> manifest_of(const fs::path& bundle) {
  std::map<std::string, std::string> out;
  for (const auto& entry : parse_sha256sums(read_file(bundle / "SHA256SUMS"))) {
    out[entry.path] = entry.sha256;
  }
  return out;
}

// A session ends with a bundle of what it recorded, and its machine and home are gone: the next
// session merges the bundle into a home of its own, writes the same bundle again with nothing
// benched, and the portfolio resumes after the bundle's cases instead of redoing them.
TEST_F(Portfolio, APortfolioBundleContinuesThePortfolioInAnotherHome) {
  const suite s = two_tasks();
  portfolio_options recorded = options_at();
  recorded.recorded_only = true;
  auto write_recorded = [&](store& records, const fs::path& out) {
    fake_bench none;
    const auto outcomes = run_portfolio(s, recorded, records, std::ref(none));
    EXPECT_TRUE(none.asked.empty());
    write_portfolio_bundle(
        records, s, outcomes,
        summarize_portfolio(s, outcomes, json(), items_not_run(s, recorded, outcomes)), json(), out,
        nullptr);
    return outcomes;
  };
  std::vector<portfolio_outcome> first;
  {
    store session(dir_ / "session1");
    recording_bench bench;
    bench.inner.fail_at = "rmsnorm/canonical";  // the session ends there
    EXPECT_THROW(static_cast<void>(run_portfolio(s, options_at(), session, std::ref(bench))),
                 std::runtime_error);
    first = write_recorded(session, dir_ / "bundle1");
  }
  fs::remove_all(dir_ / "session1");
  ASSERT_EQ(first.size(), 2U);
  ASSERT_TRUE(fs::is_regular_file(dir_ / "bundle1" / bundle_progress_name));
  const bundle_verification v = verify_evidence_bundle(dir_ / "bundle1", nullptr);
  EXPECT_TRUE(v.ok()) << (v.problems.empty() ? ""
                                             : v.problems[0].path + ": " + v.problems[0].detail);

  store next(dir_ / "session2");
  const merge_source source = check_merge_source(dir_ / "bundle1", {});
  EXPECT_EQ(source.kind, merge_source_kind::bundle);
  const source_merge m = merge_checked_source(next, source);
  EXPECT_EQ(m.runs.runs_added, 2);
  EXPECT_GT(m.runs.objects_added, 2);
  EXPECT_EQ(m.progress.items_added, 2);
  EXPECT_TRUE(m.runs.conflicts.empty());
  EXPECT_TRUE(m.progress.conflicts.empty()) << m.progress.conflicts.front();

  // Written again from the merged home, with nothing benched: the same bundle, byte for byte.
  const auto again = write_recorded(next, dir_ / "bundle2");
  ASSERT_EQ(again.size(), 2U);
  for (std::size_t i = 0; i < again.size(); ++i) EXPECT_EQ(again[i].run_id, first[i].run_id);
  EXPECT_EQ(read_file(dir_ / "bundle2/SHA256SUMS"), read_file(dir_ / "bundle1/SHA256SUMS"));

  // Merging it again changes nothing.
  const source_merge twice = merge_checked_source(next, check_merge_source(dir_ / "bundle1", {}));
  EXPECT_EQ(twice.runs.runs_added, 0);
  EXPECT_EQ(twice.runs.runs_present, 2);
  EXPECT_EQ(twice.runs.objects_added, 0);
  EXPECT_EQ(twice.progress.items_added, 0);
  EXPECT_TRUE(twice.runs.conflicts.empty());
  EXPECT_TRUE(twice.progress.conflicts.empty());

  // The portfolio resumes after the bundle's cases: only the one the first session left is run.
  recording_bench rest;
  const auto all = run_portfolio(s, options_at(), next, std::ref(rest));
  EXPECT_EQ(rest.inner.asked, std::vector<std::string>{"rmsnorm/canonical task's mode"});
  ASSERT_EQ(all.size(), 3U);
  EXPECT_TRUE(all[0].resumed);
  EXPECT_TRUE(all[1].resumed);
  EXPECT_FALSE(all[2].resumed);
  EXPECT_EQ(all[0].run_id, first[0].run_id);
  EXPECT_EQ(all[1].run_id, first[1].run_id);
  write_portfolio_bundle(next, s, all, summarize_portfolio(s, all, json()), json(), dir_ / "whole",
                         nullptr);
  EXPECT_TRUE(verify_evidence_bundle(dir_ / "whole", nullptr).ok());
}

// The bundle that the benching portfolio wrote, merged and written again: the only bytes that
// differ are the rows' "resumed", false where the first portfolio benched the case and true where
// the second took it from its home, which is what each portfolio did.
TEST_F(Portfolio, APortfolioBundleWrittenAgainDiffersOnlyInWhatWasResumed) {
  const suite s = two_tasks();
  {
    store session(dir_ / "session1");
    recording_bench bench;
    const auto outcomes = run_portfolio(s, options_at(), session, std::ref(bench));
    write_portfolio_bundle(session, s, outcomes, summarize_portfolio(s, outcomes, json()), json(),
                           dir_ / "bundle1", nullptr);
  }
  store next(dir_ / "session2");
  const source_merge m = merge_checked_source(next, check_merge_source(dir_ / "bundle1", {}));
  EXPECT_EQ(m.progress.items_added, 3);
  portfolio_options recorded = options_at();
  recorded.recorded_only = true;
  fake_bench none;
  const auto outcomes = run_portfolio(s, recorded, next, std::ref(none));
  write_portfolio_bundle(next, s, outcomes, summarize_portfolio(s, outcomes, json()), json(),
                         dir_ / "bundle2", nullptr);

  const auto before = manifest_of(dir_ / "bundle1");
  const auto after = manifest_of(dir_ / "bundle2");
  ASSERT_EQ(before.size(), after.size());
  std::vector<std::string> differ;
  for (const auto& [path, digest] : before) {
    if (after.at(path) != digest) differ.push_back(path);
  }
  EXPECT_EQ(differ, std::vector<std::string>{"results.json"});
  std::string text = read_file(dir_ / "bundle1/results.json");
  EXPECT_EQ(json::parse(text).at("rows").size(), 3U);
  for (std::size_t at = text.find("\"resumed\": false"); at != std::string::npos;
       at = text.find("\"resumed\": false", at)) {
    text.replace(at, std::string("\"resumed\": false").size(), "\"resumed\": true");
  }
  EXPECT_EQ(text, read_file(dir_ / "bundle2/results.json"));
}

// A bundle's run whose id names another run here is left out, and so is its case: the home's
// progress never names a run it holds as another's record.
TEST_F(Portfolio, ABundlesCaseWhoseRunIdNamesAnotherRunHereIsLeftOut) {
  const suite s = two_tasks();
  {
    store session(dir_ / "session1");
    recording_bench bench;
    const auto outcomes = run_portfolio(s, options_at(), session, std::ref(bench));
    write_portfolio_bundle(session, s, outcomes, summarize_portfolio(s, outcomes, json()), json(),
                           dir_ / "bundle1", nullptr);
  }
  store other(dir_ / "other");
  for (int i = 0; i < 3; ++i) {
    const std::int64_t run = other.begin_run("blaster bench --task gelu", "gelu", "");
    other.finish_run(run, "completed", other.cas().put(fmt::format("report {}", i)));
  }
  const source_merge m = merge_checked_source(other, check_merge_source(dir_ / "bundle1", {}));
  EXPECT_EQ(m.runs.runs_added, 0);
  EXPECT_EQ(m.runs.conflicts.size(), 3U);
  EXPECT_EQ(m.progress.items_added, 0);
  ASSERT_EQ(m.progress.conflicts.size(), 3U);
  EXPECT_NE(m.progress.conflicts[0].find("its run 1 did not come over"), std::string::npos)
      << m.progress.conflicts[0];
  fake_bench bench;
  static_cast<void>(run_portfolio(s, options_at(), other, std::ref(bench)));
  EXPECT_EQ(bench.asked.size(), 3U) << "a case was taken for another run's";
}

// A portfolio's bundle must say what its progress needs: one without progress.json (an earlier
// blaster's) is refused for its reason, and one whose progress.json names other runs than its
// rows fails verify, and is refused for that.
TEST_F(Portfolio, ABundleWithoutItsProgressOrWithAForgedOneIsRefused) {
  const suite s = two_tasks();
  {
    store session(dir_ / "session1");
    recording_bench bench;
    const auto outcomes = run_portfolio(s, options_at(), session, std::ref(bench));
    write_portfolio_bundle(session, s, outcomes, summarize_portfolio(s, outcomes, json()), json(),
                           dir_ / "bundle1", nullptr);
  }
  auto refusal = [&](const fs::path& bundle) {
    try {
      static_cast<void>(check_merge_source(bundle, {}));
    } catch (const input_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const fs::path old = dir_ / "old";
  fs::copy(dir_ / "bundle1", old, fs::copy_options::recursive);
  fs::remove(old / bundle_progress_name);
  resum(old);
  EXPECT_TRUE(verify_evidence_bundle(old, nullptr).ok()) << "as the bundles before it verify";
  EXPECT_NE(refusal(old).find("a portfolio's bundle without progress.json"), std::string::npos)
      << refusal(old);

  const fs::path forged = dir_ / "forged";
  fs::copy(dir_ / "bundle1", forged, fs::copy_options::recursive);
  json progress = json::parse(read_file(forged / bundle_progress_name));
  progress["done"]["relu/large"]["run_id"] = 1;  // relu canonical's run
  write_file_atomically(forged / bundle_progress_name, progress.dump(1) + "\n");
  resum(forged);
  const bundle_verification v = verify_evidence_bundle(forged, nullptr);
  ASSERT_EQ(v.problems.size(), 1U);
  EXPECT_EQ(v.problems[0].kind, bundle_problem_kind::claim);
  EXPECT_NE(v.problems[0].detail.find("relu/large is"), std::string::npos) << v.problems[0].detail;
  EXPECT_NE(refusal(forged).find("claim progress.json"), std::string::npos) << refusal(forged);
}

}  // namespace
}  // namespace blaster
