// The optimization loop on the GPU, with a scripted proposer: a source that does not compile,
// each kind of gate rejection (cheating kernels of tests/adversarial/), an honest improvement,
// then a proposer that hangs. Every step's status and reason must match what its kernel is known
// to deserve, the honest one must be kept with a positive reward, and the session must export
// as a trajectory bundle that verify accepts.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include <nlohmann/json.hpp>

#include "core/file_io.hpp"
#include "evidence/bundle_verifier.hpp"
#include "evidence/store.hpp"
#include "optimize/bench_evaluator.hpp"
#include "optimize/optimization_memory.hpp"
#include "optimize/trajectory.hpp"
#include "optimize/trajectory_claims.hpp"
#include "require_gpu.hpp"

namespace blaster {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

const std::filesystem::path source_dir = BLASTER_SOURCE_DIR;

// The reasons a checked-in kernel is known to deserve: its "// expect: a|b" line.
std::vector<std::string> expected_reasons(const std::filesystem::path& file) {
  static const std::regex expect(R"(// expect: ([a-z_|]+))");
  const std::string source = read_file(file);
  std::smatch m;
  if (!std::regex_search(source, m, expect)) return {};
  std::vector<std::string> out;
  std::string all = m[1].str();
  for (std::size_t at = 0; at <= all.size();) {
    const auto bar = all.find('|', at);
    out.push_back(all.substr(at, bar == std::string::npos ? std::string::npos : bar - at));
    if (bar == std::string::npos) break;
    at = bar + 1;
  }
  return out;
}

TEST(OptimizeGpu, AScriptedSessionGetsTheStatusEachStepDeserves) {
  BLASTER_REQUIRE_GPU();
  const auto home = std::filesystem::temp_directory_path() /
                    ("blaster-optimize-gpu-" + std::to_string(::getpid()));
  std::filesystem::remove_all(home);
  std::filesystem::create_directories(home);
  const auto adversarial = source_dir / "tests" / "adversarial";
  const std::vector<std::filesystem::path> files = {
      adversarial / "include_absolute_path.cu",  // compile_error
      adversarial / "no_sqrt.cu",                // wrong_result
      adversarial / "nan_output.cu",             // nonfinite
      adversarial / "partial_output.cu",         // unwritten_output
      adversarial / "one_past_end.cu",           // out_of_bounds_write
      adversarial / "writes_input.cu",           // input_modified
      adversarial / "racy_atomic_order.cu",      // nondeterministic
      adversarial / "skips_written_output.cu",   // stale_in_timing
      adversarial / "stale_output.cu",           // unwritten_output
      adversarial / "illegal_address.cu",        // crash
      adversarial / "infinite_loop.cu",          // timeout
      source_dir / "kernels" / "rmsnorm" / "rmsnorm_vec_regs.cu",  // an honest improvement
  };
  std::string replies;
  for (const auto& f : files) {
    replies += json{{"source", read_file(f)}, {"hypothesis", f.stem().string()},
                    {"tags", {f.stem().string()}}}
                   .dump() +
               "\n";
  }
  replies += "SLEEP\n";
  write_file_atomically(home / "replies.txt", replies);

  store records(home / "home");
  bench_options b;
  b.root = source_dir;
  b.task = "rmsnorm";
  b.sessions = 2;
  b.profile = true;  // each step carries the diagnosis, as optimize's steps do by default
  b.timing.max_samples = 30;
  b.compile.timeout = std::chrono::seconds(10);
  b.worker_executable = BLASTER_BINARY;
  bench_evaluator judge(b, records);
  optimize_options o;
  o.command = "blaster optimize --task rmsnorm --proposer scripted";
  o.task = brief_of(source_dir, "rmsnorm", "");
  o.proposer = "exec 3< '" + (home / "replies.txt").string() +
               "'; while IFS= read -r request; do IFS= read -r reply <&3 || exit 0; "
               "[ \"$reply\" = SLEEP ] && sleep 600; printf '%s\\n' \"$reply\"; done";
  o.steps = 20;
  o.reply_deadline = 3000ms;
  o.scratch = home / "scratch";
  const optimize_result r = run_optimize(o, records, judge);

  EXPECT_EQ(r.ended, "proposer_timeout") << r.why;
  ASSERT_EQ(r.steps.size(), files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    const attempt& a = r.steps[i];
    const auto expected = expected_reasons(files[i]);
    if (expected.empty() || expected[0] == "passed") {
      EXPECT_EQ(a.status, "ok") << files[i] << ": " << a.reason << " " << a.message;
      continue;
    }
    EXPECT_NE(std::find(expected.begin(), expected.end(), a.reason), expected.end())
        << files[i] << ": " << a.reason << " " << a.message;
    EXPECT_EQ(a.status, trajectory_status(a.reason));
    EXPECT_EQ(a.reward, 0.0);
    EXPECT_GT(a.bench_run_id, 0);
  }
  const attempt& honest = r.steps.back();
  EXPECT_TRUE(honest.kept);
  EXPECT_EQ(r.best, honest.step);
  ASSERT_TRUE(honest.speedup && honest.speedup_low && honest.speedup_high);
  EXPECT_GT(*honest.speedup_low, 1.0) << "rmsnorm_vec_regs is several times the baseline";
  // Asked for two sessions, timed in the reward protocol's three, rewarded over those three.
  EXPECT_EQ(honest.reward_sessions, default_reward_sessions);
  EXPECT_EQ(honest.reward, *honest.speedup_low);
  EXPECT_LE(*honest.speedup_low, *honest.speedup);
  EXPECT_FALSE(honest.diagnosis.empty());
  EXPECT_EQ(r.steps[0].status, "compileerror");
  // One kept worker gated and timed every step; the crash and the hang each cost it its life,
  // and the steps after them were judged by its successor.
  EXPECT_GE(judge.workers_started(), 3);
  EXPECT_LE(judge.workers_started(), 5);
  // The baseline was timed alone before the first request, and what its run prepared (the
  // probe, the ceilings, the gate's references) every step reused.
  ASSERT_TRUE(r.baseline);
  EXPECT_GT(r.baseline->bench_run_id, 0);
  ASSERT_TRUE(r.baseline->time_us);
  EXPECT_GT(*r.baseline->time_us, 0.0);
  EXPECT_FALSE(r.baseline->bound.empty());
  EXPECT_FALSE(r.device.value("model", std::string()).empty()) << r.device.dump();
  EXPECT_TRUE(r.device.at("ceilings").contains("dram_copy_gbs")) << r.device.dump();
  for (const attempt& a : r.steps) EXPECT_FALSE(a.phase_ms.contains("references")) << a.step;
  EXPECT_EQ(r.steps[1].improved_bound, r.baseline->bound);
  EXPECT_FALSE(honest.gpu.empty());
  EXPECT_FALSE(honest.phase_ms.contains("references"));
  EXPECT_FALSE(honest.phase_ms.contains("probe"));
  EXPECT_TRUE(honest.phase_ms.contains("timing"));
  EXPECT_FALSE(r.steps[1].phase_ms.contains("timing")) << "a rejected step times nothing";

  const auto out = home / "trajectory";
  static_cast<void>(export_trajectories(records, {r.run_id}, out, nullptr));
  bundle_verification v = verify_bundle(out, nullptr);
  check_run_records(v);
  check_trajectory_claims(v);  // every step recomputed from its judging run's report
  EXPECT_TRUE(v.ok()) << (v.problems.empty() ? "" : v.problems[0].path + ": " + v.problems[0].detail);
  const std::string lines = read_file(out / "trajectories.jsonl");
  const json t = json::parse(lines.substr(0, lines.find('\n')));
  EXPECT_EQ(t.at("gpu").get<std::string>().find("H"), 0U) << t.at("gpu");
  ASSERT_EQ(t.at("trace").size(), files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    EXPECT_EQ(t.at("trace")[i].at("status"), r.steps[i].status);
    EXPECT_EQ(t.at("trace")[i].at("reason"), r.steps[i].reason);
  }
  std::filesystem::remove_all(home);
}

}  // namespace
}  // namespace blaster
