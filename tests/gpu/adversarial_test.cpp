// The adversarial suite: every cheating or broken kernel in tests/adversarial/ gets the reason
// its header names ("// expect: reason" or "reason|reason"), the honest candidates still pass,
// and the whole run finishes well within a minute of the deadlines it has to wait out.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "benchmarking/gate/sanitizer_pass.hpp"
#include "benchmarking/runner/bench_runner.hpp"
#include "core/file_io.hpp"
#include "evidence/store.hpp"
#include "gpu/require_gpu.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {
namespace {

const std::filesystem::path source_dir = [] {
  const char* root = std::getenv("BLASTER_ROOT");
  return std::filesystem::path(root != nullptr && *root != '\0' ? root : BLASTER_SOURCE_DIR);
}();

// The verdicts a kernel's header allows.
std::set<std::string> expected_verdicts(const std::filesystem::path& file) {
  static const std::regex expect(R"(// expect: ([a-z_|]+))");
  std::smatch m;
  const std::string source = read_file(file);
  if (!std::regex_search(source, m, expect)) return {};
  std::set<std::string> out;
  std::stringstream list(m[1].str());
  for (std::string item; std::getline(list, item, '|');) out.insert(item);
  return out;
}

// A bench of `task` on `candidates` from the tree under test, run by the built worker.
bench_options bench_of(const std::string& task, std::vector<std::filesystem::path> candidates,
                       std::string command) {
  bench_options options;
  options.root = source_dir;
  options.task = task;
  options.candidates = std::move(candidates);
  options.timing.max_samples = 30;
  options.worker_executable = BLASTER_BINARY;
  options.command = std::move(command);
  return options;
}

// "passed", or the reason a variant was rejected for; and that verdict shown with the message and
// the timed pairs' evidence, for a failure's output.
std::string verdict_of(const variant_result& r) {
  return r.status == "passed" ? "passed" : std::string(to_string(r.reason));
}
std::string shown_with_pairs(const variant_result& r) {
  return fmt::format("{} got {}: {}{}", r.label, verdict_of(r), r.message,
                     r.poisoned ? "\n" + to_json(*r.poisoned).dump() : std::string());
}

// The report of a bench with `options`, recorded in a store of its own that is gone after it.
bench_report bench_apart(const bench_options& options) {
  static int runs = 0;
  const auto home = std::filesystem::temp_directory_path() /
                    fmt::format("blaster-adversarial-{}-{}", ::getpid(), ++runs);
  std::filesystem::remove_all(home);
  bench_report report;
  {
    store records(home);
    report = run_bench(options, records);
  }
  std::filesystem::remove_all(home);
  return report;
}

TEST(AdversarialGpu, EveryCheatIsRejectedWithItsReasonAndHonestKernelsPass) {
  BLASTER_REQUIRE_GPU();
  const auto home = std::filesystem::temp_directory_path() /
                    ("blaster-adversarial-" + std::to_string(::getpid()));
  std::filesystem::remove_all(home);
  bench_options options = bench_of(
      "rmsnorm", {source_dir / "tests" / "adversarial", source_dir / "kernels" / "rmsnorm"},
      "adversarial suite");
  // The compile bombs meet this deadline instead of the default minute: the suite stays fast.
  options.compile.timeout = std::chrono::seconds(10);
  const auto started = std::chrono::steady_clock::now();
  bench_report report;
  {
    store records(home);
    report = run_bench(options, records);
  }
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_TRUE(report.gpu) << report.gpu_unavailable;

  std::size_t adversarial = 0;
  std::size_t timeouts = 0;
  for (const auto& r : report.results) {
    const std::string verdict = verdict_of(r);
    const std::filesystem::path file = r.file;
    if (file.parent_path().filename() == "adversarial") {
      ++adversarial;
      const auto allowed = expected_verdicts(file);
      ASSERT_FALSE(allowed.empty()) << file << " names no expected verdict";
      EXPECT_TRUE(allowed.contains(verdict)) << r.label << " got " << verdict << ": " << r.message;
      if (verdict != "passed") {
        // A time below the floor is the evidence: only then was a rejected kernel timed.
        EXPECT_EQ(r.timing.has_value(), verdict == "impossible_speed")
            << r.label << " was timed although it was rejected";
        EXPECT_FALSE(r.message.empty()) << r.label << " was rejected without evidence";
      }
      if (verdict == "timeout") ++timeouts;
    } else {
      EXPECT_EQ(verdict, "passed") << r.label << ": " << r.message;
    }
  }
  // Every file of the suite ran: none was dropped before the gate.
  std::size_t files = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(source_dir / "tests" / "adversarial"))
    files += entry.path().extension() == ".cu" ? 1 : 0;
  EXPECT_EQ(adversarial, files);
  EXPECT_GE(files, 18U);
  EXPECT_GE(timeouts, 1U);
  // The whole suite, hangs and compile bombs included, in a minute and a half.
  EXPECT_LT(wall_s, 90.0) << wall_s;

  // Every case is on record, with its reason.
  store records(home);
  auto rows = records.db().prepare("SELECT COUNT(*), COUNT(reason) FROM results WHERE run_id = ?");
  rows.bind(1, report.run_id);
  ASSERT_TRUE(rows.step());
  EXPECT_EQ(rows.column_int64(0), static_cast<std::int64_t>(report.results.size()));
  std::int64_t rejected = 0;
  for (const auto& r : report.results) rejected += r.status == "rejected" ? 1 : 0;
  EXPECT_EQ(rows.column_int64(1), rejected);
  std::filesystem::remove_all(home);
}

// The modes that poison the outputs before every launch (cold, single) check every launch's
// output: a kernel that skips its work when its outputs hold an answer finds poison every time,
// so it does the baseline's work in every timed launch and gets the baseline's time, not a
// cheat's.
TEST(AdversarialGpu, ModesThatPoisonEveryLaunchGiveSkippingKernelsNothingToSkip) {
  BLASTER_REQUIRE_GPU();
  for (const auto& mode : timing_modes()) {
    if (!mode.checks_every_sample) continue;
    SCOPED_TRACE(mode.name);
    const auto folder = source_dir / "tests" / "adversarial";
    bench_options options = bench_of(
        "rmsnorm", {folder / "skips_written_output.cu", folder / "remembers_its_output.cu"},
        fmt::format("adversarial suite, {}", mode.name));
    options.timing.mode = mode.mode;
    options.mode_given = true;
    options.timing.max_samples = 20;
    const bench_report report = bench_apart(options);
    ASSERT_TRUE(report.gpu) << report.gpu_unavailable;
    ASSERT_EQ(report.results.size(), 3U);
    ASSERT_EQ(report.results[0].status, "passed") << report.results[0].message;
    const double baseline_us = *report.results[0].time_us;
    for (const auto& r : report.results) {
      ASSERT_EQ(r.status, "passed") << r.label << ": " << to_string(r.reason) << " " << r.message;
      // The same loops as the baseline, run in full every time.
      EXPECT_NEAR(*r.time_us / baseline_us, 1.0, 0.25) << r.label;
      EXPECT_EQ(r.timing->source, "CUPTI kernel time") << r.label;
      ASSERT_TRUE(r.floor);
      // 268 MB of data, far beyond the L2; after cold mode's flush the empty L2 may keep what
      // a launch writes, up to its size, until the launch ends.
      EXPECT_EQ(r.floor->level, mode.may_hold_l2 ? "dram" : "l2+dram");
    }
  }
}

// A cache updated in place (inout) holds, after a launch, what the next launch is asked to
// write: kernels that take that for work already done are rejected, the honest append passes on
// every case, and the cache the gate checks is the drawn one with the new rows.
TEST(AdversarialGpu, InPlaceCheatsAreRejectedAndTheHonestAppendPasses) {
  BLASTER_REQUIRE_GPU();
  bench_options options = bench_of(
      "kv_append",
      {source_dir / "tests" / "adversarial" / "kv_append", source_dir / "kernels" / "kv_append"},
      "adversarial suite, in place");
  options.use_tuned = false;
  const bench_report report = bench_apart(options);
  ASSERT_TRUE(report.gpu) << report.gpu_unavailable;
  std::size_t cheats = 0;
  for (const auto& r : report.results) {
    const std::string verdict = verdict_of(r);
    const std::filesystem::path file = r.file;
    if (file.parent_path().filename() == "kv_append" &&
        file.parent_path().parent_path().filename() == "adversarial") {
      ++cheats;
      const auto allowed = expected_verdicts(file);
      ASSERT_FALSE(allowed.empty()) << file << " names no expected verdict";
      EXPECT_TRUE(allowed.contains(verdict)) << r.label << " got " << verdict << ": " << r.message;
    } else {
      EXPECT_EQ(verdict, "passed") << r.label << ": " << r.message;
    }
  }
  EXPECT_EQ(cheats, 2U);
}

// A bug that lives only at sizes no fixed case has: sum_dim1 ported with one row too many read
// whenever D1 mod 1024 falls in 768..1023 passes every fixed case, and fails on the shapes the gate
// draws from the task's ranges, its evidence naming the drawn case and its shape; the same kernel
// with the bound mended passes every shape.
TEST(AdversarialGpu, ABugAtSizesNoFixedCaseHasFailsOnADrawnShape) {
  BLASTER_REQUIRE_GPU();
  const task_spec task = load_task(source_dir, "sum_dim1");
  for (const auto& c : task.cases) {
    const auto rows = static_cast<long long>(c.values.at("D1"));
    ASSERT_FALSE(rows % 1024 >= 768) << c.name << ": a fixed case would catch the bug itself";
  }
  bench_options options = bench_of("sum_dim1",
                                   {source_dir / "tests" / "adversarial" / "sum_dim1",
                                    source_dir / "tests" / "gpu" / "kernels" / "sum_dim1"},
                                   "adversarial suite, drawn shapes");
  const bench_report report = bench_apart(options);
  ASSERT_TRUE(report.gpu) << report.gpu_unavailable;
  ASSERT_EQ(report.results.size(), 3U);  // the baseline, the broken port and its mended twin
  for (const auto& r : report.results) {
    const std::string verdict = verdict_of(r);
    const std::filesystem::path file = r.file;
    if (file.parent_path().parent_path().filename() == "adversarial") {
      EXPECT_TRUE(expected_verdicts(file).contains(verdict))
          << r.label << " got " << verdict << ": " << r.message;
      EXPECT_NE(r.message.find("case drawn:" + std::to_string(report.seed) + ":"),
                std::string::npos)
          << r.message;
      EXPECT_NE(r.message.find(" D1="), std::string::npos) << r.message;  // the drawn shape
    } else {
      EXPECT_EQ(verdict, "passed") << r.label << ": " << r.message;
    }
  }
}

// Skips small enough to hide in a fixed slack: an eighth of the blocks, where the outputs hold the
// kernel's last answer, or where its last launch ended a moment ago. Each comparison's two sides
// differ in that one thing, in pairs whose interval is the slack, so both are rejected with the
// interval as their evidence; the honest kernels built like them (reading their outputs and the
// clock, keeping what they saw, never skipping) pass, in each mode that checks by these pairs.
TEST(AdversarialGpu, AnEighthSkippedIsRejectedByItsIntervalAndItsLookAlikesPass) {
  BLASTER_REQUIRE_GPU();
  const auto cheats = source_dir / "tests" / "adversarial";
  const auto honest = source_dir / "tests" / "gpu" / "kernels" / "rmsnorm";
  const std::map<std::string, std::string> evidence_of = {
      {"skips_an_eighth_of_its_answer", "poisoned over control"},
      {"skips_an_eighth_right_after_itself", "paused over back to back"}};
  for (const auto& mode : timing_modes()) {
    if (!mode.checks_output_dependence) continue;
    SCOPED_TRACE(mode.name);
    bench_options options = bench_of("rmsnorm",
                                     {cheats / "skips_an_eighth_of_its_answer.cu",
                                      cheats / "skips_an_eighth_right_after_itself.cu",
                                      honest / "notes_its_answer.cu", honest / "keeps_the_clock.cu"},
                                     fmt::format("adversarial suite, an eighth, {}", mode.name));
    options.timing.mode = mode.mode;
    options.mode_given = true;
    const bench_report report = bench_apart(options);
    ASSERT_TRUE(report.gpu) << report.gpu_unavailable;
    ASSERT_EQ(report.results.size(), 5U);
    for (const auto& r : report.results) {
      const std::string verdict = verdict_of(r);
      const std::string shown = shown_with_pairs(r);
      const std::string name = std::filesystem::path(r.file).stem().string();
      if (!evidence_of.contains(name)) {
        EXPECT_EQ(verdict, "passed") << shown;
        continue;
      }
      EXPECT_EQ(verdict, "stale_in_timing") << shown;
      EXPECT_NE(r.message.find(evidence_of.at(name)), std::string::npos) << shown;
      EXPECT_NE(r.message.find("(99.9%)"), std::string::npos) << shown;
    }
  }
}

// Skips keyed on the L2 as well as on what the outputs hold: every eighth block of rms_norm at
// 1024 tokens (16 MB of inputs and outputs, which the L2 holds) returns at once where its row is
// as it left it and the row's output, its input or a word of its own memory is still cached. Both
// sides of the output comparison find the lines cached as a hot timing's launch finds them after
// the launch before it, so the skip shows there; the look-alike that times the same loads and
// keeps the same keys passes.
TEST(AdversarialGpu, SkipsKeyedOnACachedRowAreRejectedAndTheirLookAlikePasses) {
  BLASTER_REQUIRE_GPU();
  const auto folder = source_dir / "tests" / "adversarial" / "rms_norm";
  for (const auto& mode : timing_modes()) {
    if (!mode.checks_output_dependence) continue;
    SCOPED_TRACE(mode.name);
    bench_options options = bench_of("rms_norm",
                                     {folder / "skips_an_eighth_when_cached.cu",
                                      folder / "skips_an_eighth_when_x_cached.cu",
                                      folder / "skips_an_eighth_when_its_mark_is_cached.cu",
                                      folder / "times_its_cached_rows.cu"},
                                     fmt::format("adversarial suite, cached rows, {}", mode.name));
    options.timed_case = "t1024";
    options.timing.mode = mode.mode;
    options.mode_given = true;
    options.use_tuned = false;
    const bench_report report = bench_apart(options);
    ASSERT_TRUE(report.gpu) << report.gpu_unavailable;
    ASSERT_EQ(report.results.size(), 5U);
    for (const auto& r : report.results) {
      const std::string verdict = verdict_of(r);
      const std::string shown = shown_with_pairs(r);
      if (r.baseline || r.candidate == "times_its_cached_rows") {
        EXPECT_EQ(verdict, "passed") << shown;
        continue;
      }
      EXPECT_EQ(verdict, "stale_in_timing") << shown;
      EXPECT_NE(r.message.find("poisoned over control"), std::string::npos) << shown;
    }
  }
}

// Cold mode's flush leaves no line of the launch before it, whatever eviction priority the kernel
// asked for: 1024 tokens of rms_norm (8 MiB of x, inside the L2) read with evict_last hints take
// as long as with evict_normal ones. A kept x would come from the L2, several times faster.
TEST(AdversarialGpu, EvictLastHintsKeepNothingThroughColdModesFlush) {
  BLASTER_REQUIRE_GPU();
  const auto folder = source_dir / "tests" / "adversarial" / "rms_norm";
  bench_options options = bench_of(
      "rms_norm", {folder / "x_evict_last.cu", folder / "x_evict_normal.cu"},
      "adversarial suite, L2 priorities");
  options.timed_case = "t1024";
  options.timing.mode = timing_mode::cold;
  options.mode_given = true;
  options.use_tuned = false;
  const bench_report report = bench_apart(options);
  ASSERT_TRUE(report.gpu) << report.gpu_unavailable;
  std::map<std::string, double> time_us;
  for (const auto& r : report.results) {
    ASSERT_EQ(r.status, "passed") << r.label << ": " << r.message;
    ASSERT_TRUE(r.time_us) << r.label;
    time_us[std::filesystem::path(r.file).stem().string()] = *r.time_us;
  }
  ASSERT_TRUE(time_us.contains("x_evict_last") && time_us.contains("x_evict_normal"));
  EXPECT_GT(time_us["x_evict_last"], 0.9 * time_us["x_evict_normal"])
      << "evict_last " << time_us["x_evict_last"] << " us, evict_normal "
      << time_us["x_evict_normal"] << " us";
}

// Scratch is the candidate's to size: under --rotate, kernels that declare far more than they
// touch find their inputs rotated over as many buffer sets as the baseline's, and are judged
// against the same floor. 128 tokens of rms_norm hold 2 MB, so the baseline rotates over tens
// of sets.
TEST(AdversarialGpu, DeclaredScratchShrinksNoRotation) {
  BLASTER_REQUIRE_GPU();
  const auto folder = source_dir / "tests" / "adversarial" / "rms_norm";
  bench_options options =
      bench_of("rms_norm", {folder / "pads_its_scratch.cu", folder / "workspace_per_token.cu"},
               "adversarial suite, scratch");
  options.timed_case = "t128";
  options.use_tuned = false;
  options.timing.rotate_buffers = true;
  const bench_report report = bench_apart(options);
  ASSERT_TRUE(report.gpu) << report.gpu_unavailable;
  ASSERT_EQ(report.results.size(), 3U);  // the baseline and two cheats
  const auto& baseline = report.results.front();
  ASSERT_EQ(baseline.status, "passed") << baseline.message;
  ASSERT_TRUE(baseline.timing && baseline.floor);
  EXPECT_GT(baseline.timing->buffer_copies, 8);
  EXPECT_EQ(baseline.floor->level, "dram");
  for (const auto& r : report.results) {
    ASSERT_EQ(r.status, "passed") << r.label << ": " << to_string(r.reason) << " " << r.message;
    ASSERT_TRUE(r.timing && r.floor) << r.label;
    EXPECT_EQ(r.timing->buffer_copies, baseline.timing->buffer_copies) << r.label;
    EXPECT_EQ(r.floor->level, baseline.floor->level) << r.label;
    // An honest rms_norm's loops, over inputs as far from the SMs as the baseline's.
    EXPECT_NEAR(*r.time_us / *baseline.time_us, 1.0, 0.25) << r.label;
  }
}

// Kernels that keep what they derived from their inputs across launches, keyed by the buffers'
// addresses, by a launch count, by the time since their last launch, or by a fingerprint of the
// values, pass every check on the timed draw, which is all a timing meets; launches on the
// case's other draws, each right after a run of launches, give the first three the timed draw's
// answer, and the fourth its own work again, slower than on the draw it has seen.
// A large case is gated on two draws for this: 8192 tokens of Llama-3-70B's hidden size, where
// the ones keyed by a launch count and by value never take their shortcut and are left out.
TEST(AdversarialGpu, KernelsThatRememberTheirInputsAreRejected) {
  BLASTER_REQUIRE_GPU();
  const auto folder = source_dir / "tests" / "adversarial" / "rms_norm";
  for (const auto& [timed_case, draws] :
       std::vector<std::pair<std::string, std::size_t>>{{"t1024", 3}, {"h8192_t8192", 2}}) {
    SCOPED_TRACE(timed_case);
    bench_options options =
        bench_of("rms_norm",
                 {folder / "remembers_scales_by_address.cu", folder / "trusts_scales_in_a_run.cu"},
                 "adversarial suite, unseen inputs");
    // At the large case a timing makes fewer than the 200 launches after which the warm-up cheat
    // trusts anything (on the H200 it stayed honest, as fast on every draw), and the value-keyed
    // one's array holds less than a case.
    if (draws == 3) {
      options.candidates.push_back(folder / "trusts_scales_after_warmup.cu");
      options.candidates.push_back(folder / "remembers_output_by_value.cu");
    }
    options.timed_case = timed_case;
    options.use_tuned = false;
    const bench_report report = bench_apart(options);
    ASSERT_TRUE(report.gpu) << report.gpu_unavailable;
    ASSERT_EQ(report.results.size(), options.candidates.size() + 1);
    for (const auto& r : report.results) {
      const std::string evidence = fmt::format("{} {}{}", to_string(r.reason), r.message,
                                               r.unseen ? "\n" + to_json(*r.unseen).dump() : "");
      ASSERT_TRUE(r.unseen) << r.label << ": " << evidence;
      EXPECT_EQ(r.unseen->unseen_us.size(), draws - 1) << r.label;  // the case's other draws
      if (r.baseline) {
        EXPECT_EQ(r.status, "passed") << r.label << ": " << evidence;
        EXPECT_FALSE(input_dependence(*r.unseen)) << r.label << ": " << evidence;
      } else if (r.candidate == "remembers_output_by_value") {
        // Its answers are right on every draw; its time on the unseen ones gives it away.
        EXPECT_EQ(r.reason, reason_code::stale_in_timing) << r.label << ": " << evidence;
        EXPECT_TRUE(input_dependence(*r.unseen)) << r.label << ": " << evidence;
      } else {
        EXPECT_EQ(r.reason, reason_code::stale_in_timing) << r.label << ": " << evidence;
        EXPECT_NE(r.message.find("did not give what the gate's runs"), std::string::npos)
            << r.label << ": " << evidence;
        EXPECT_FALSE(r.unseen->differing.empty()) << r.label;
      }
    }
  }
}

// Kernels with a shortcut for runs of launches, keyed by what tells a run from a launch alone: the
// same buffers as the last launch a moment ago (the timing's, without rotation), buffers used a
// moment ago, gaps as short as a graph's, inputs that come from DRAM as after a cold-mode
// sample's flush. Each is rejected by its outputs on a draw it was not timed on, from the run
// that its key cannot tell from the timing's: in place (the other draw copied over the timed
// buffers right after launches there) or after launches elsewhere (a graph's run in graph mode,
// and in cold mode every launch after a flush). Two whose window is shorter than that copy give
// the right answer there, and are slower after launches on the same buffers and a pause than back
// to back. In hot mode at 1024 tokens, in graph mode at one token (graph-mode samples are what
// the third keys on) and in cold mode at 1024 tokens.
TEST(AdversarialGpu, KernelsWithAShortcutForRunsOfLaunchesAreRejected) {
  BLASTER_REQUIRE_GPU();
  const auto folder = source_dir / "tests" / "adversarial" / "rms_norm";
  // The run each cheat is caught in, as its differing outputs name it.
  const std::map<std::string, std::string> caught_in = {
      {"trusts_scales_on_the_same_buffers", "in place"},
      {"trusts_scales_of_recent_buffers", "in place"},
      {"trusts_scales_in_a_graph", "after launches elsewhere"},
      {"trusts_scales_when_cold", "in place"},
      // Windows shorter than the in-place run's copy: the launches after a pause catch them, or
      // the run in place where the copy is quicker than their window.
      {"trusts_scales_right_after_itself", "after a pause"},
      {"trusts_scales_at_its_own_pace", "after a pause"}};
  int caught_after_a_pause = 0;
  struct timed_run {
    std::string timed_case;
    timing_mode mode;
    std::vector<std::string> cheats;
  };
  const std::vector<timed_run> runs = {
      {"t1024",
       timing_mode::hot,
       {"trusts_scales_on_the_same_buffers", "trusts_scales_of_recent_buffers",
        "trusts_scales_right_after_itself", "trusts_scales_at_its_own_pace"}},
      {"t1",
       timing_mode::graph,
       {"trusts_scales_on_the_same_buffers", "trusts_scales_of_recent_buffers",
        "trusts_scales_in_a_graph"}},
      {"t1024", timing_mode::cold, {"trusts_scales_when_cold"}}};
  for (const auto& [timed_case, mode, cheats] : runs) {
    SCOPED_TRACE(fmt::format("{} {}", timed_case, to_string(mode)));
    std::vector<std::filesystem::path> candidates;
    for (const auto& name : cheats) candidates.push_back(folder / (name + ".cu"));
    bench_options options = bench_of("rms_norm", candidates, "adversarial suite, runs of launches");
    options.timed_case = timed_case;
    options.timing.mode = mode;
    options.mode_given = true;
    options.use_tuned = false;
    const bench_report report = bench_apart(options);
    ASSERT_TRUE(report.gpu) << report.gpu_unavailable;
    ASSERT_EQ(report.results.size(), candidates.size() + 1);
    for (const auto& r : report.results) {
      const std::string evidence = fmt::format("{} {}{}", to_string(r.reason), r.message,
                                               r.unseen ? "\n" + to_json(*r.unseen).dump() : "");
      ASSERT_TRUE(r.unseen) << r.label << ": " << evidence;
      EXPECT_EQ(r.unseen->in_place_us.size(), 2U) << r.label;  // the case's other draws
      if (r.baseline) {
        EXPECT_EQ(r.status, "passed") << r.label << ": " << evidence;
        EXPECT_TRUE(r.unseen->differing.empty()) << r.label << ": " << evidence;
        continue;
      }
      EXPECT_EQ(r.reason, reason_code::stale_in_timing) << r.label << ": " << evidence;
      const std::string& run = caught_in.at(r.candidate);
      if (run == "after a pause") {
        const bool paused = r.message.find("and a pause of") != std::string::npos;
        caught_after_a_pause += paused ? 1 : 0;
        EXPECT_TRUE(paused || !r.unseen->differing.empty()) << r.label << ": " << evidence;
        continue;
      }
      EXPECT_TRUE(std::any_of(r.unseen->differing.begin(), r.unseen->differing.end(),
                              [&](const std::string& d) { return d.ends_with(run); }))
          << r.label << " was not caught " << run << ": " << evidence;
    }
  }
  EXPECT_GE(caught_after_a_pause, 1) << "no cheat was caught by its launches after a pause";
}

// --sanitize finds what no output shows: a warp that reads its neighbour's shared memory with no
// __syncwarp passes the gate, and racecheck rejects it; the honest candidates still pass.
TEST(AdversarialGpu, SanitizeRejectsAWarpRaceTheGateCannotSee) {
  BLASTER_REQUIRE_GPU();
  if (!find_compute_sanitizer()) GTEST_SKIP() << "compute-sanitizer is not installed here";
  bench_options options = bench_of("rmsnorm",
                                   {source_dir / "tests" / "sanitizer" / "warp_race.cu",
                                    source_dir / "kernels" / "rmsnorm" / "rmsnorm_vec_regs.cu"},
                                   "sanitizer check");
  options.sanitize = true;
  options.timing.max_samples = 10;
  const bench_report report = bench_apart(options);
  ASSERT_TRUE(report.gpu) << report.gpu_unavailable;
  for (const auto& r : report.results) {
    EXPECT_FALSE(r.sanitizer.empty()) << r.label << " did not run under compute-sanitizer";
    if (r.candidate == "warp_race") {
      EXPECT_EQ(r.reason, reason_code::sanitizer_error) << r.label << ": " << r.message;
      EXPECT_NE(r.message.find("racecheck"), std::string::npos) << r.message;
    } else {
      EXPECT_EQ(r.status, "passed") << r.label << ": " << to_string(r.reason) << " " << r.message;
    }
  }
}

}  // namespace
}  // namespace blaster
