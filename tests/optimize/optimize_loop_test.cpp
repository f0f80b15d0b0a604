// The loop with scripted proposers and a stand-in judge (no GPU): each kind of step is recorded
// with its status, a proposer that dies, hangs or stops ends the session cleanly, the memory
// carries one session's experience into the next, and a session exports as a trajectory bundle
// that verify checks.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <fstream>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "evidence/bundle_verifier.hpp"
#include "evidence/run_catalog.hpp"
#include "evidence/store.hpp"
#include "optimize/optimization_memory.hpp"
#include "optimize/optimize_loop.hpp"
#include "optimize/session_resume.hpp"
#include "optimize/stand_in_judge.hpp"
#include "optimize/temp_home.hpp"
#include "optimize/trajectory.hpp"
#include "optimize/trajectory_claims.hpp"

namespace blaster {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

class OptimizeLoop : public ::testing::Test {
 protected:
  testing::temp_home home_{"loop"};
  store records_{home_.path() / "home"};

  // A proposer that answers each request with the next line of `replies` (SLEEP: it hangs)
  // and writes every request it read on its standard error, into the run's proposer.log: its
  // box lets it write nowhere else.
  optimize_options session(const std::vector<std::string>& replies, int steps) {
    static int sessions = 0;
    const int n = ++sessions;
    const auto replies_file = home_.path() / ("replies-" + std::to_string(n) + ".txt");
    std::string text;
    for (const auto& r : replies) text += r + "\n";
    write_file_atomically(replies_file, text);
    optimize_options o;
    o.command = "blaster optimize --task rmsnorm --proposer scripted";
    o.proposer = "exec 3< '" + replies_file.string() +
                 "'; while IFS= read -r request; do printf '%s\\n' \"$request\" >&2; "
                 "IFS= read -r reply <&3 || exit 0; [ \"$reply\" = SLEEP ] && sleep 60; "
                 "printf '%s\\n' \"$reply\"; done";
    o.box.keeper = BLASTER_BINARY;
    o.task = task_brief{.name = "rmsnorm", .title = "RMSNorm over dim 1",
                        .contract = {{"name", "rmsnorm"},
                                     {"buffers", {{"x", {{"dtype", "f16"}, {"shape", {"B", "C"}},
                                                         {"role", "input"}}}}},
                                     {"symbols", {{"B", {{"type", "i32"}}}}}},
                        .baseline_source = "/* blaster baseline */", .timed_case = "canonical",
                        .shape = "B=16 C=64", .dtype = "f16"};
    o.steps = steps;
    o.reply_deadline = 5000ms;
    o.scratch = home_.path() / "scratch";
    return o;
  }

  // The requests the session's proposer read, as it wrote them into proposer.log.
  static std::vector<json> requests(const optimize_result& r) {
    std::vector<json> out;
    std::ifstream in(r.folder / "proposer.log");
    for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
    return out;
  }

  std::string run_status(std::int64_t run_id) {
    return run_catalog(records_).find_run(run_id)->status;
  }
};

TEST_F(OptimizeLoop, EachKindOfStepIsRecordedWithItsStatus) {
  stand_in_judge judge;
  const auto o = session({"this is not JSON", candidate("COMPILE_ERROR", "typo"),
                          candidate("WRONG", "skip the mean"), candidate("HANGS", "spin"),
                          candidate("FAST 1.5", "vectorize", {"vectorize"}),
                          candidate("FAST 1.2", "smaller blocks"),
                          candidate("FAST 2.0", "one pass", {"one-pass"})},
                         7);
  std::vector<int> seen;
  const auto r = run_optimize(o, records_, judge, [&](const attempt& a) { seen.push_back(a.step); });
  EXPECT_EQ(r.ended, "steps");
  EXPECT_EQ(seen, (std::vector<int>{1, 2, 3, 4, 5, 6, 7}));
  ASSERT_EQ(r.steps.size(), 7U);
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"compileerror", "invalid_reply"}, {"compileerror", "compile_error"},
      {"wrongresult", "wrong_result"},   {"wrongresult", "timeout"},
      {"ok", ""},                        {"ok", ""},
      {"ok", ""}};
  const auto stored = optimization_memory(records_).steps_of(r.run_id);
  ASSERT_EQ(stored.size(), 7U);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(stored[i].status, expected[i].first) << "step " << i + 1;
    EXPECT_EQ(stored[i].reason, expected[i].second) << "step " << i + 1;
  }
  // The rejected steps' reward is 0; a passing step's is its interval's low end.
  EXPECT_EQ(stored[2].reward, 0.0);
  EXPECT_DOUBLE_EQ(stored[4].reward, 1.5 * 0.98);
  // Only the best is kept, and the session names it.
  EXPECT_EQ(r.best, 7);
  for (const auto& a : stored) EXPECT_EQ(a.kept, a.step == 7) << "step " << a.step;
  EXPECT_EQ(stored[5].parent, 5);
  // The invalid reply is kept as evidence; no source was made of it.
  EXPECT_TRUE(stored[0].source_sha256.empty());
  EXPECT_EQ(records_.cas().get(stored[0].reply_sha256), "this is not JSON");
  EXPECT_NE(stored[0].message.find("not JSON"), std::string::npos);
  EXPECT_EQ(run_status(r.run_id), "completed");

  // What the proposer was told.
  const auto asked = requests(r);
  ASSERT_EQ(asked.size(), 7U);
  EXPECT_TRUE(asked[0].at("best").is_null());
  EXPECT_EQ(asked[2].at("attempts")[1].at("error_line"), 3);
  EXPECT_NE(asked[2].at("attempts")[1].at("compile_log").get<std::string>().find("oops"),
            std::string::npos);
  EXPECT_EQ(asked[4].at("attempts")[3].at("reason"), "timeout");
  EXPECT_EQ(asked[5].at("best").at("step"), 5);
  EXPECT_NE(asked[5].at("best").at("source").get<std::string>().find("FAST 1.5"),
            std::string::npos);
  EXPECT_EQ(asked[5].at("device").at("name"), "NVIDIA H200");
  EXPECT_EQ(asked[6].at("steps_left"), 1);

  // The judge named the candidate's file by its path under the home, as bench does: what the
  // proposer is told, and what is stored, names the file alone.
  EXPECT_EQ(asked[2].at("attempts")[1].at("message"),
            "candidate-" + stored[1].source_sha256.substr(0, 12) + ".cu does not compile for sm_90a");
  for (const json& request : asked) {
    EXPECT_EQ(request.dump().find(home_.path().string()), std::string::npos) << request.dump();
  }
  EXPECT_EQ(stored[1].message.find(home_.path().string()), std::string::npos) << stored[1].message;
}

// The baseline is timed alone before the first request, which then says what the card is, what
// it can do and how fast the baseline is: the proposer's first idea can aim at the ceiling. The
// baseline's timing is no step.
TEST_F(OptimizeLoop, TheFirstRequestCarriesTheDeviceItsCeilingsAndTheBaselinesTime) {
  stand_in_judge judge;
  const auto o = session({candidate("FAST 1.5", "vectorize")}, 1);
  const auto r = run_optimize(o, records_, judge);
  EXPECT_EQ(r.ended, "steps") << r.why;
  EXPECT_EQ(judge.baselines, 1);
  const auto asked = requests(r);
  ASSERT_EQ(asked.size(), 1U);
  const json& device = asked[0].at("device");
  ASSERT_TRUE(device.is_object()) << asked[0].dump();
  EXPECT_EQ(device.at("name"), "NVIDIA H200");
  EXPECT_EQ(device.at("model"), "H200");
  EXPECT_EQ(device.at("sm_count"), 132);
  EXPECT_EQ(device.at("total_memory_bytes"), 150754820096);
  EXPECT_EQ(device.at("ceilings").at("dram_copy_gbs"), 4200.0);
  EXPECT_EQ(asked[0].at("baseline_us"), 100.0);
  ASSERT_EQ(r.steps.size(), 1U);
  EXPECT_EQ(r.steps[0].step, 1);
  // The session's record keeps what timed the baseline and what bounds it.
  const json record = to_json(r, o);
  EXPECT_EQ(record.at("baseline").at("time_us"), 100.0);
  EXPECT_EQ(record.at("baseline").at("bound"), "latency-bound");
}

// Without a GPU the baseline cannot be timed: the first request says so (null device and time),
// and the session goes on as before until a candidate that compiles ends it.
TEST_F(OptimizeLoop, WithoutAGpuTheFirstRequestHasNoDeviceAndTheSessionEndsAsBefore) {
  stand_in_judge judge;
  judge.baseline_on_gpu = false;
  const auto r = run_optimize(
      session({candidate("COMPILE_ERROR", "a"), candidate("NO_GPU", "b")}, 5), records_, judge);
  EXPECT_EQ(r.ended, "no_gpu");
  const auto asked = requests(r);
  ASSERT_EQ(asked.size(), 2U);
  EXPECT_TRUE(asked[0].at("device").is_null());
  EXPECT_TRUE(asked[0].at("baseline_us").is_null());
  ASSERT_TRUE(r.baseline);
  EXPECT_EQ(r.baseline->message, "no CUDA driver on this machine");
}

// Each step records its GPU's model and the bound of the kernel it set out to improve (the
// baseline's, then the best's); a request's memory shows this card's steps first, those that
// improved a kernel of the same bound before the rest, and names every entry's card.
TEST_F(OptimizeLoop, TheMemoryShowsThisCardsStepsForKernelsInTheSameStateFirst) {
  stand_in_judge h100;
  h100.gpu = "NVIDIA H100 80GB HBM3";
  const auto other_card =
      run_optimize(session({candidate("FAST 1.9", "on the other card")}, 1), records_, h100);
  stand_in_judge h200;
  const auto earlier = run_optimize(
      session({candidate("FAST 1.2", "from latency"), candidate("FAST 1.4", "from bandwidth")}, 2),
      records_, h200);
  ASSERT_EQ(earlier.steps.size(), 2U);
  EXPECT_EQ(earlier.steps[0].gpu, "H200");
  EXPECT_EQ(earlier.steps[0].improved_bound, "latency-bound");  // the baseline's
  EXPECT_EQ(earlier.steps[0].bound, "bandwidth-bound");
  EXPECT_EQ(earlier.steps[1].improved_bound, "bandwidth-bound");  // step 1's, the best then
  const auto stored = optimization_memory(records_).steps_of(other_card.run_id);
  ASSERT_EQ(stored.size(), 1U);
  EXPECT_EQ(stored[0].gpu, "H100");
  EXPECT_EQ(stored[0].bound, "bandwidth-bound");
  EXPECT_EQ(stored[0].improved_bound, "latency-bound");

  stand_in_judge again;
  const auto r = run_optimize(
      session({candidate("FAST 1.1", "first"), candidate("FAST 1.05", "second")}, 2), records_,
      again);
  const auto asked = requests(r);
  ASSERT_EQ(asked.size(), 2U);
  // The baseline is latency-bound: what improved a latency-bound kernel on this card leads,
  // although the other card's step and this card's other step were more rewarding.
  const json& first = asked[0].at("memory");
  ASSERT_EQ(first.size(), 3U) << first.dump();
  EXPECT_EQ(first[0].at("hypothesis"), "from latency");
  EXPECT_EQ(first[1].at("hypothesis"), "from bandwidth");
  EXPECT_EQ(first[2].at("hypothesis"), "on the other card");
  EXPECT_EQ(first[0].at("gpu"), "H200");
  EXPECT_EQ(first[2].at("gpu"), "H100");
  EXPECT_EQ(first[0].at("improved_bound"), "latency-bound");
  // Step 1 passed bandwidth-bound and is the best: what improved such a kernel leads now.
  const json& second = asked[1].at("memory");
  ASSERT_EQ(second.size(), 3U) << second.dump();
  EXPECT_EQ(second[0].at("hypothesis"), "from bandwidth");
  EXPECT_EQ(second[1].at("hypothesis"), "from latency");
  EXPECT_EQ(second[2].at("gpu"), "H100");
}

// A reply holding a byte that is not UTF-8 is an invalid reply that names the byte; nothing the
// session stores or sends holds it, so the session, the memory, a later session and the export
// all go on.
TEST_F(OptimizeLoop, AReplyThatIsNotUtf8IsAnInvalidReplyAndPoisonsNothing) {
  stand_in_judge judge;
  std::string poisoned = candidate("FAST 1.2", "cafe");
  poisoned.insert(poisoned.find("cafe") + 4, "\xFF");
  const auto r = run_optimize(
      session({poisoned, "\xFF\xFE not even JSON", candidate("FAST 1.5", "after", {"t"})}, 3),
      records_, judge);
  EXPECT_EQ(r.ended, "steps") << r.why;
  ASSERT_EQ(r.steps.size(), 3U);
  EXPECT_EQ(r.steps[0].reason, "invalid_reply");
  EXPECT_NE(r.steps[0].message.find("byte 0xFF at offset"), std::string::npos)
      << r.steps[0].message;
  EXPECT_EQ(r.steps[1].reason, "invalid_reply");
  EXPECT_EQ(r.steps[2].status, "ok");
  EXPECT_EQ(records_.cas().get(r.steps[0].reply_sha256), poisoned) << "kept as it came";
  const auto asked = requests(r);
  ASSERT_EQ(asked.size(), 3U);
  EXPECT_EQ(asked[2].at("attempts")[0].at("reason"), "invalid_reply");

  for (const auto& e : optimization_memory(records_).recall(
           {.task = std::nullopt, .tag = std::nullopt, .exclude_run = std::nullopt,
            .limit = 50})) {
    EXPECT_NO_THROW(static_cast<void>(to_json(e).dump()));
  }
  const auto next = run_optimize(session({candidate("FAST 1.1", "next")}, 1), records_, judge);
  EXPECT_EQ(next.ended, "steps") << next.why;
  EXPECT_EQ(requests(next).at(0).at("memory").size(), 3U);
  EXPECT_NO_THROW(export_trajectories(records_, {r.run_id}, home_.path() / "bundle", nullptr));
}

// A home an older blaster wrote may already hold such bytes in its steps: it still loads, for
// the memory, a new session and the export.
TEST_F(OptimizeLoop, AHomeThatAlreadyHoldsBytesThatAreNotUtf8StillLoads) {
  stand_in_judge judge;
  const auto r = run_optimize(
      session({candidate("WRONG", "first"), candidate("FAST 1.3", "second", {"t"})}, 2),
      records_, judge);
  statement poison = records_.db().prepare(
      "UPDATE optimize_steps SET hypothesis = ?1, message = ?2, tags_json = ?3, "
      "params_json = ?4 WHERE run_id = ?5");
  poison.bind(1, std::string("caf\xFF"));
  poison.bind(2, std::string("the reply is not JSON: last read: '\"\xFF'"));
  poison.bind(3, std::string("[\"t\xFF\"]"));
  poison.bind(4, std::string("{\"VEC\": \"\xFF\"}"));
  poison.bind(5, r.run_id);
  poison.step();

  const auto entries = optimization_memory(records_).recall(
      {.task = "rmsnorm", .tag = std::nullopt, .exclude_run = std::nullopt, .limit = 50});
  ASSERT_EQ(entries.size(), 2U);
  EXPECT_EQ(entries[0].step.hypothesis, "caf\xEF\xBF\xBD");  // U+FFFD
  for (const auto& e : entries) EXPECT_NO_THROW(static_cast<void>(to_json(e).dump()));
  const auto next = run_optimize(session({candidate("FAST 1.1", "next", {"t"})}, 1), records_, judge);
  EXPECT_EQ(next.ended, "steps") << next.why;
  EXPECT_EQ(requests(next).at(0).at("memory").size(), 2U);
  EXPECT_NO_THROW(export_trajectories(records_, {r.run_id}, home_.path() / "bundle", nullptr));
}

// A step whose judging fails (the machine, the store) ends the session with an error, and the
// proposer with it: nothing it started is left running.
TEST_F(OptimizeLoop, AFailingJudgeEndsTheProposerToo) {
  stand_in_judge judge;
  auto o = session({candidate("FAILS", "x")}, 3);
  // Its pid, and that of a child it started, go to its log before it replies.
  o.proposer = "sleep 300 & echo \"pids $$ $!\" >&2; " + o.proposer;
  std::filesystem::path folder;
  EXPECT_THROW(run_optimize(o, records_, judge, [](const attempt&) {}), error);
  for (const auto& entry : std::filesystem::recursive_directory_iterator(o.scratch)) {
    if (entry.path().filename() == "proposer.log") folder = entry.path().parent_path();
  }
  std::ifstream log(folder / "proposer.log");
  std::string word;
  log >> word;
  ASSERT_EQ(word, "pids");
  for (pid_t pid = 0; log >> pid;) {
    EXPECT_TRUE(::kill(pid, 0) == -1 && errno == ESRCH) << pid;
  }
}

TEST_F(OptimizeLoop, ADyingProposerEndsTheSessionAndKeepsItsSteps) {
  stand_in_judge judge;
  const auto r = run_optimize(session({candidate("FAST 1.1", "a"), candidate("WRONG", "b")}, 10),
                              records_, judge);
  EXPECT_EQ(r.ended, "proposer_exited");
  EXPECT_NE(r.why.find("exited with code 0"), std::string::npos) << r.why;
  EXPECT_EQ(optimization_memory(records_).steps_of(r.run_id).size(), 2U);
  EXPECT_EQ(run_status(r.run_id), "completed");
}

TEST_F(OptimizeLoop, AHangingProposerIsKilledAtItsDeadline) {
  stand_in_judge judge;
  auto o = session({candidate("FAST 1.1", "a"), "SLEEP"}, 10);
  o.reply_deadline = 400ms;
  const auto started = std::chrono::steady_clock::now();
  const auto r = run_optimize(o, records_, judge);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
  EXPECT_EQ(r.ended, "proposer_timeout");
  EXPECT_EQ(r.steps.size(), 1U);
}

TEST_F(OptimizeLoop, AProposerMayStop) {
  stand_in_judge judge;
  const auto r = run_optimize(
      session({candidate("FAST 1.1", "a"), R"({"stop": true, "why": "done"})"}, 10), records_,
      judge);
  EXPECT_EQ(r.ended, "proposer_stopped");
  EXPECT_NE(r.why.find("done"), std::string::npos);
  EXPECT_EQ(r.steps.size(), 1U);
}

TEST_F(OptimizeLoop, WithoutAGpuTheFirstCompiledStepEndsTheSession) {
  stand_in_judge judge;
  const auto r = run_optimize(
      session({candidate("COMPILE_ERROR", "a"), candidate("NO_GPU", "b"), candidate("FAST 2", "c")},
              10),
      records_, judge);
  EXPECT_EQ(r.ended, "no_gpu");
  ASSERT_EQ(r.steps.size(), 2U);
  EXPECT_EQ(r.steps[1].status, "unjudged");
  EXPECT_EQ(run_status(r.run_id), "no_gpu");
}

TEST_F(OptimizeLoop, TheMemoryCarriesOneSessionIntoTheNext) {
  stand_in_judge judge;
  const auto first = run_optimize(
      session({candidate("FAST 1.3", "vectorize loads", {"vectorize"}),
               candidate("WRONG", "drop eps", {"numerics"})},
              2),
      records_, judge);
  const auto second = run_optimize(
      session({candidate("FAST 1.1", "retry", {"numerics"}), candidate("FAST 1.2", "again")}, 2),
      records_, judge);
  const auto asked = requests(second);
  ASSERT_EQ(asked.size(), 2U);
  const json& memory = asked[0].at("memory");
  ASSERT_EQ(memory.size(), 2U);
  // What worked first, then what was rejected, all from the first session.
  EXPECT_EQ(memory[0].at("hypothesis"), "vectorize loads");
  EXPECT_EQ(memory[0].at("run_id"), first.run_id);
  EXPECT_EQ(memory[1].at("reason"), "wrong_result");
  // The session's own steps are feedback, not memory.
  for (const auto& e : asked[1].at("memory")) EXPECT_NE(e.at("run_id"), second.run_id);

  optimization_memory m(records_);
  const auto tagged = m.recall({.task = std::nullopt, .tag = "numerics", .exclude_run = std::nullopt,
                                .limit = 10});
  ASSERT_EQ(tagged.size(), 2U);
  EXPECT_EQ(tagged[0].step.hypothesis, "retry");  // the higher reward first
  EXPECT_EQ(m.recall({.task = "softmax", .tag = std::nullopt, .exclude_run = std::nullopt,
                      .limit = 10})
                .size(),
            0U);
}

TEST_F(OptimizeLoop, AStepNeverCitesWhatTheStoreDoesNotHold) {
  const std::int64_t run = records_.begin_run("blaster optimize --task rmsnorm", "rmsnorm", "");
  optimization_memory memory(records_);
  attempt a;
  a.step = 1;
  a.status = "ok";
  a.source_sha256 = std::string(64, 'a');
  EXPECT_THROW(memory.record(run, "rmsnorm", "canonical", a), error);
  a.source_sha256 = "not a digest";
  EXPECT_THROW(memory.record(run, "rmsnorm", "canonical", a), error);
  a.source_sha256 = records_.cas().put("__global__ void k() {}");
  memory.record(run, "rmsnorm", "canonical", a);
  EXPECT_EQ(memory.steps_of(run).size(), 1U);
}

TEST_F(OptimizeLoop, ASessionExportsAsAVerifiedTrajectory) {
  stand_in_judge judge;
  const auto r = run_optimize(
      session({"{", candidate("COMPILE_ERROR", "typo", {"fix"}),
               candidate("FAST 1.5", "vectorize", {"vectorize"}), candidate("WRONG", "skip"),
               candidate("FAST 1.25", "retune")},
              5),
      records_, judge);
  const json t = trajectory_of(records_, r.run_id);
  // Exactly the format's fields, with blaster's own beside them.
  for (const char* key : {"op", "impl", "gpu", "arch", "dtype", "shape", "signature", "desc",
                          "baseline_ms", "best", "attempts", "elapsed_s", "elapsed_hms",
                          "num_steps", "messages", "trace"}) {
    EXPECT_TRUE(t.contains(key)) << key;
  }
  EXPECT_EQ(t.at("op"), "rmsnorm");
  EXPECT_EQ(t.at("impl"), "cuda");
  EXPECT_EQ(t.at("gpu"), "H200");
  EXPECT_EQ(t.at("arch"), "sm90a");
  EXPECT_EQ(t.at("dtype"), "fp16");
  EXPECT_EQ(t.at("shape"), json({{"B", 16}, {"C", 64}}));
  EXPECT_EQ(t.at("baseline_ms"), 0.1);
  EXPECT_EQ(t.at("best").at("step"), 3);
  EXPECT_DOUBLE_EQ(t.at("best").at("time_ms").get<double>(), 100.0 / 1.5 / 1000.0);
  EXPECT_EQ(t.at("num_steps"), 5);
  const json& trace = t.at("trace");
  ASSERT_EQ(trace.size(), 5U);
  const std::vector<std::string> statuses = {"compileerror", "compileerror", "ok", "wrongresult",
                                             "ok"};
  for (std::size_t i = 0; i < statuses.size(); ++i) {
    EXPECT_EQ(trace[i].at("status"), statuses[i]) << i;
  }
  EXPECT_EQ(trace[0].at("reason"), "invalid_reply");
  EXPECT_FALSE(trace[0].contains("time"));
  EXPECT_DOUBLE_EQ(trace[2].at("time").get<double>(), 100.0 / 1.5 / 1000.0);
  EXPECT_EQ(trace[2].at("kept"), true);
  EXPECT_EQ(trace[4].at("kept"), false);
  EXPECT_EQ(trace[2].at("tag"), "vectorize");
  // system, then per step the request line as sent and the reply line as it came: the next
  // request carries the step's feedback.
  const json& messages = t.at("messages");
  ASSERT_EQ(messages.size(), 1U + 2U * 5U);
  EXPECT_EQ(messages[0].at("role"), "system");
  EXPECT_EQ(messages[1].at("role"), "user");
  EXPECT_EQ(json::parse(messages[1].at("content").get<std::string>()).at("step"), 1);
  EXPECT_EQ(messages[2].at("role"), "assistant");
  EXPECT_EQ(messages[2].at("content"), "{");  // the reply itself, as it came
  EXPECT_EQ(messages[2].at("blaster_not_a_candidate"), true);
  const json fourth = json::parse(messages[7].at("content").get<std::string>());
  EXPECT_EQ(fourth.at("best").at("step"), 3);
  EXPECT_EQ(fourth.at("attempts")[1].at("reason"), "compile_error");

  const auto out = home_.path() / "bundle";
  const auto written = export_trajectories(records_, {r.run_id}, out, nullptr);
  const auto lines = read_file(out / "trajectories.jsonl");
  EXPECT_EQ(json::parse(lines.substr(0, lines.find('\n'))), t);
  // Every step's source and reply is in the bundle under its digest.
  for (const auto& a : optimization_memory(records_).steps_of(r.run_id)) {
    EXPECT_TRUE(std::filesystem::exists(out / "objects" / a.reply_sha256)) << a.step;
    if (!a.source_sha256.empty()) {
      EXPECT_TRUE(std::filesystem::exists(out / "objects" / a.source_sha256)) << a.step;
    }
  }
  bundle_verification verified = verify_bundle(out, nullptr);
  check_run_records(verified);  // each session's run.json against the bundle's objects/
  EXPECT_TRUE(verified.ok()) << (verified.problems.empty() ? "" : verified.problems[0].detail);
  // A changed number is caught.
  write_file_atomically(out / "trajectories.jsonl", lines + " ");
  EXPECT_FALSE(verify_bundle(out, nullptr).ok());
}

// Given two evaluators (two GPUs), two steps are under way at once: the proposer is asked for
// the next step while the first is judged, its request names the steps under way, each step is
// judged on a free evaluator, and the steps are recorded in step order although the later ones
// were judged first.
TEST_F(OptimizeLoop, WithTwoGpusTwoStepsAreUnderWayAtOnceAndRecordedInStepOrder) {
  stand_in_judge first_gpu;
  stand_in_judge second_gpu;
  const auto o = session({candidate("WAIT 3000 FAST 1.2", "slow to judge"),
                          candidate("FAST 1.5", "quick"), candidate("WAIT 100 FAST 1.1", "third")},
                         3);
  std::vector<int> seen;
  const auto r = run_optimize(o, records_, {&first_gpu, &second_gpu},
                              [&](const attempt& a) { seen.push_back(a.step); });
  EXPECT_EQ(r.ended, "steps") << r.why;
  EXPECT_EQ(seen, (std::vector<int>{1, 2, 3}));
  // Step 1 held the first GPU the whole time: the others were judged on the second.
  EXPECT_EQ(first_gpu.evaluations, 1);
  EXPECT_EQ(second_gpu.evaluations, 2);
  const auto asked = requests(r);
  ASSERT_EQ(asked.size(), 3U);
  EXPECT_FALSE(asked[0].contains("in_flight"));
  ASSERT_EQ(asked[1].at("in_flight").size(), 1U);
  EXPECT_EQ(asked[1].at("in_flight")[0].at("step"), 1);
  EXPECT_EQ(asked[1].at("in_flight")[0].at("hypothesis"), "slow to judge");
  EXPECT_TRUE(asked[1].at("attempts").empty()) << "step 1 is not judged yet";
  ASSERT_EQ(asked[2].at("in_flight").size(), 2U);
  // The best follows the rewards in step order, as one step at a time would have it.
  const auto stored = optimization_memory(records_).steps_of(r.run_id);
  ASSERT_EQ(stored.size(), 3U);
  for (const auto& a : stored) EXPECT_EQ(a.kept, a.step == 2) << "step " << a.step;
  EXPECT_EQ(r.best, 2);
  EXPECT_FALSE(r.steps[1].parent) << "asked before any step was judged";
}

// A session whose proposer died goes on with optimize --resume from its last recorded step: the
// same run, its best and steps so far in the new proposer's first request, the step count and
// the clock going on, new steps appended, and one trajectory that verifies.
TEST_F(OptimizeLoop, AnInterruptedSessionResumesFromItsLastStepAsOneSession) {
  stand_in_judge judge(records_);
  auto first = session({candidate("FAST 1.5", "vectorize", {"vectorize"}), candidate("WRONG", "b")},
                       4);
  first.settings = {{"steps", 4}};
  const auto before = run_optimize(first, records_, judge);
  EXPECT_EQ(before.ended, "proposer_exited");
  ASSERT_EQ(before.steps.size(), 2U);

  const resumable_session resumable =
      find_resumable_session(records_, std::to_string(before.run_id));
  EXPECT_EQ(resumable.task, "rmsnorm");
  EXPECT_EQ(resumable.settings, first.settings);
  EXPECT_EQ(resumable.ended, "proposer_exited");
  auto again = session({candidate("FAST 2.0", "one pass", {"one-pass"}), candidate("WRONG", "d")},
                       4);
  again.resume = resumable;
  const auto after = run_optimize(again, records_, judge);
  EXPECT_EQ(after.ended, "steps") << after.why;
  EXPECT_EQ(after.run_id, before.run_id);
  ASSERT_EQ(after.steps.size(), 4U);
  EXPECT_EQ(after.steps[2].step, 3);
  EXPECT_EQ(after.steps[2].parent, 1) << "the best before the interruption";
  EXPECT_GE(after.steps[2].at_s, before.steps[1].at_s + before.steps[1].elapsed_s);
  EXPECT_EQ(after.best, 3);
  // proposer.log goes on too: the first proposer's three requests, then the new one's two.
  const auto asked = requests(after);
  ASSERT_EQ(asked.size(), 5U);
  const json& resumed = asked[3];
  EXPECT_EQ(resumed.at("step"), 3);
  EXPECT_EQ(resumed.at("steps_left"), 2);
  EXPECT_EQ(resumed.at("attempts").size(), 2U);
  EXPECT_EQ(resumed.at("best").at("step"), 1);
  EXPECT_NE(resumed.at("best").at("source").get<std::string>().find("FAST 1.5"),
            std::string::npos);
  const auto stored = optimization_memory(records_).steps_of(before.run_id);
  ASSERT_EQ(stored.size(), 4U);
  for (const auto& a : stored) EXPECT_EQ(a.kept, a.step == 3) << "step " << a.step;
  EXPECT_EQ(run_status(before.run_id), "completed");

  const auto out = home_.path() / "resumed";
  export_trajectories(records_, {before.run_id}, out, nullptr);
  const std::string lines = read_file(out / "trajectories.jsonl");
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 1) << "one session";
  const json t = json::parse(lines.substr(0, lines.find('\n')));
  EXPECT_EQ(t.at("num_steps"), 4);
  EXPECT_EQ(t.at("messages").size(), 1U + 2U * 4U);
  EXPECT_EQ(t.at("best").at("step"), 3);
  bundle_verification verified = verify_bundle(out, nullptr);
  check_run_records(verified);
  EXPECT_TRUE(verified.ok()) << (verified.problems.empty() ? "" : verified.problems[0].detail);
}

// With two GPUs a session that ends while steps are under way (here the machine fails judging
// step 1, while steps 2 and 3 are judged on the other GPU) loses none of them: each taken step is
// kept with the run until it is recorded, and a resume records them first, in step order, under
// their own numbers: from their judging runs where those completed (2 and 3), else judged again
// (1). The new proposer's first request carries every step, and the session exports and verifies
// as one.
TEST_F(OptimizeLoop, StepsUnderWayWhenASessionEndsAreRecoveredOnResume) {
  store second_records(home_.path() / "home");  // a lane's own connection, as optimize --gpus
  stand_in_judge first_gpu(records_);
  stand_in_judge second_gpu(second_records);
  auto first = session(
      {candidate("WAIT 300 FAILS FAST 1.2", "slow, then the machine fails"),
       candidate("FAST 1.5", "quick"), candidate("WAIT 600 FAST 1.1", "judged after the failure")},
      5);
  first.settings = {{"steps", 5}};
  EXPECT_THROW(run_optimize(first, records_, {&first_gpu, &second_gpu}), error);
  const std::int64_t run = find_resumable_session(records_, "latest").run_id;
  ASSERT_EQ(run_status(run), "failed");
  EXPECT_TRUE(optimization_memory(records_).steps_of(run).empty()) << "step 1 was never judged";
  EXPECT_EQ(second_gpu.evaluations, 2);

  first_gpu.machine_fails = second_gpu.machine_fails = false;
  auto again = session({candidate("FAST 2.0", "after the resume")}, 4);
  again.resume = find_resumable_session(records_, std::to_string(run));
  const std::int64_t before_resume = records_.last_run_id();
  std::vector<int> seen;
  const auto r = run_optimize(again, records_, {&first_gpu, &second_gpu},
                              [&](const attempt& a) { seen.push_back(a.step); });
  EXPECT_EQ(r.ended, "steps") << r.why;
  EXPECT_EQ(seen, (std::vector<int>{1, 2, 3, 4}));
  const auto stored = optimization_memory(records_).steps_of(run);
  ASSERT_EQ(stored.size(), 4U);
  EXPECT_EQ(stored[0].hypothesis, "slow, then the machine fails");
  EXPECT_EQ(stored[1].hypothesis, "quick");
  EXPECT_EQ(stored[2].hypothesis, "judged after the failure");
  EXPECT_EQ(stored[3].hypothesis, "after the resume");
  // Steps 2 and 3 are their judging runs from before the resume; step 1 was judged again.
  EXPECT_EQ(first_gpu.recovered + second_gpu.recovered, 2);
  EXPECT_GT(stored[0].bench_run_id, before_resume);
  EXPECT_LE(stored[1].bench_run_id, before_resume);
  EXPECT_LE(stored[2].bench_run_id, before_resume);
  for (const attempt& a : stored) EXPECT_EQ(a.status, "ok") << a.step;
  for (const attempt& a : stored) EXPECT_EQ(a.kept, a.step == 4) << a.step;
  // The requests and replies of the steps taken up are those of the first proposer.
  EXPECT_EQ(records_.cas().get(stored[1].reply_sha256), candidate("FAST 1.5", "quick"));
  EXPECT_EQ(json::parse(*records_.cas().get(stored[2].request_sha256)).at("in_flight").size(), 2U);
  // The new proposer's first request asks for step 4 and carries steps 1 to 3, none under way.
  const auto asked = requests(r);
  const json& resumed = asked.back();
  EXPECT_EQ(resumed.at("step"), 4);
  EXPECT_EQ(resumed.at("attempts").size(), 3U);
  EXPECT_FALSE(resumed.contains("in_flight"));
  // The resume names what it took up; nothing taken is left unrecorded.
  statement taken = records_.db().prepare(
      "SELECT kind, name, sha256 FROM artifacts WHERE run_id = ?1 AND kind IN ('resume', "
      "'taken_step') ORDER BY id");
  taken.bind(1, run);
  std::vector<std::string> names;
  json resume;
  while (taken.step()) {
    names.push_back(taken.column_text(1));
    if (taken.column_text(1) == "resume-1.json") {
      resume = json::parse(*records_.cas().get(taken.column_text(2)));
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{"resume-1.json"}));
  EXPECT_EQ(resume.at("interrupted_steps"), json({1, 2, 3}));
  EXPECT_EQ(resume.at("after_step"), 0);

  const auto out = home_.path() / "recovered";
  export_trajectories(records_, {run}, out, nullptr);
  bundle_verification verified = verify_bundle(out, nullptr);
  check_run_records(verified);
  check_trajectory_claims(verified);
  std::string problems;
  for (const auto& p : verified.problems) problems += p.path + ": " + p.detail + "\n";
  EXPECT_TRUE(verified.ok()) << problems;
  const json t = json::parse(read_file(out / "trajectories.jsonl"));
  EXPECT_EQ(t.at("num_steps"), 4);
  EXPECT_EQ(t.at("messages").size(), 1U + 2U * 4U);
}

// A session whose judging failed (the machine, or blaster killed mid-step) resumes too, the step
// whose judging failed judged again once the machine is repaired; what finished, is not there, is
// no optimize session, is still running or kept no settings is refused with the run named and
// what to do instead.
TEST_F(OptimizeLoop, ResumeTakesOnlyASessionThatDidNotFinish) {
  stand_in_judge judge;
  auto failing = session({candidate("FAST 1.3", "a"), candidate("FAILS WRONG", "b")}, 5);
  failing.settings = {{"steps", 5}};
  EXPECT_THROW(run_optimize(failing, records_, judge), error);
  const std::int64_t failed = records_.last_run_id();
  EXPECT_EQ(run_status(failed), "failed");
  judge.machine_fails = false;
  auto again = session({candidate("FAST 1.6", "c")}, 5);
  again.resume = find_resumable_session(records_, "latest");
  EXPECT_EQ(again.resume->run_id, failed);
  const auto resumed = run_optimize(again, records_, judge);
  ASSERT_EQ(resumed.steps.size(), 3U);
  EXPECT_EQ(resumed.steps[1].hypothesis, "b");
  EXPECT_EQ(resumed.steps[1].reason, "wrong_result");
  EXPECT_EQ(resumed.steps[2].hypothesis, "c");

  const auto refusal = [&](const std::string& reference) {
    try {
      static_cast<void>(find_resumable_session(records_, reference));
    } catch (const input_error& e) {
      return std::string(e.what());
    }
    return std::string("no input_error");
  };
  auto done = session({candidate("FAST 1.1", "x")}, 1);
  done.settings = {{"steps", 1}};
  const auto finished = run_optimize(done, records_, judge);
  EXPECT_NE(refusal(std::to_string(finished.run_id))
                .find(fmt::format("run {} finished (all 1 steps were taken)", finished.run_id)),
            std::string::npos)
      << refusal(std::to_string(finished.run_id));
  EXPECT_NE(refusal("999").find("run 999 does not exist"), std::string::npos) << refusal("999");
  const std::int64_t bench = records_.begin_run("blaster bench --task rmsnorm", "rmsnorm", "");
  records_.finish_run(bench, "completed", "");
  EXPECT_NE(refusal(std::to_string(bench)).find("is not an optimize session"), std::string::npos);
  const std::int64_t running =
      records_.begin_run("blaster optimize --task rmsnorm --proposer x", "rmsnorm", "");
  EXPECT_NE(refusal(std::to_string(running)).find("is still running"), std::string::npos);
  records_.finish_run(running, "failed", "");
  EXPECT_NE(refusal(std::to_string(running)).find("without its session's settings"),
            std::string::npos);
  EXPECT_NE(refusal("x1").find("give an optimize run's id"), std::string::npos);
}

// The built-in params proposer, resumed, goes on with its search from the session's recorded
// steps, which the new proposer's first request carries: the configurations judged before the
// interruption are not proposed again.
TEST_F(OptimizeLoop, TheParamsProposerResumedGoesOnFromTheRecordedSteps) {
  const auto file = home_.path() / "k.cu";
  write_file_atomically(file,
                        "/* blaster\n{\"launch\": [{\"kernel\": \"k<VEC>\", \"grid\": 1, "
                        "\"block\": 32, \"args\": [\"x\"]}], \"params\": {\"VEC\": [1, 2, 4, 8]}}"
                        "\n*/\n// FAST 1.5\ntemplate <int VEC> __global__ void k(const __half* x) "
                        "{}\n");
  const std::string params =
      fmt::format("'{}' --root '{}' proposer params --task rmsnorm --sessions 3 --candidate '{}'",
                  BLASTER_BINARY, BLASTER_SOURCE_DIR, file.string());
  stand_in_judge judge;
  auto first = session({}, 10);
  first.settings = {{"steps", 10}};
  // It answers two requests, then its output ends: an interrupted session.
  first.proposer = params +
                   " | { IFS= read -r a && printf '%s\\n' \"$a\"; IFS= read -r b && "
                   "printf '%s\\n' \"$b\"; }";
  const auto before = run_optimize(first, records_, judge);
  ASSERT_EQ(before.steps.size(), 2U) << before.ended << ": " << before.why;
  EXPECT_EQ(before.steps[0].hypothesis.rfind("k[VEC=1]: round 1", 0), 0U)
      << before.steps[0].hypothesis;
  EXPECT_EQ(before.steps[1].hypothesis.rfind("k[VEC=2]: round 1", 0), 0U)
      << before.steps[1].hypothesis;

  auto again = session({}, 4);
  again.proposer = params;
  again.resume = find_resumable_session(records_, std::to_string(before.run_id));
  const auto after = run_optimize(again, records_, judge);
  ASSERT_EQ(after.steps.size(), 4U) << after.ended << ": " << after.why;
  EXPECT_EQ(after.steps[2].hypothesis.rfind("k[VEC=4]: round 1", 0), 0U)
      << after.steps[2].hypothesis;
  EXPECT_EQ(after.steps[3].hypothesis.rfind("k[VEC=8]: round 1", 0), 0U)
      << after.steps[3].hypothesis;
}

TEST_F(OptimizeLoop, OnlyOptimizeRunsExport) {
  const std::int64_t bench = records_.begin_run("blaster bench --task rmsnorm", "rmsnorm", "");
  records_.finish_run(bench, "completed", "");
  try {
    static_cast<void>(trajectory_of(records_, bench));
    ADD_FAILURE() << "no input_error";
  } catch (const input_error& e) {
    EXPECT_NE(std::string(e.what()).find("not an optimize, serve or eval session"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace blaster
