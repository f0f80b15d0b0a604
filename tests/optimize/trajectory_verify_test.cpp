// A session's output as evidence: its exported messages are the very lines the proposer read and
// wrote, every step is judged under one reward protocol, and `verify` recomputes each trajectory
// row from the session's records and the judging runs in the bundle, so that an edited row fails.
// A stand-in judge (no GPU) records each step as a bench run of its own, as bench does.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <iostream>
#include <stdexcept>

#include <fmt/format.h>

#include "core/file_io.hpp"
#include "core/sha256.hpp"
#include "evidence/bundle_verifier.hpp"
#include "evidence/sha256sums.hpp"
#include "evidence/store.hpp"
#include "optimize/optimization_memory.hpp"
#include "optimize/optimize_loop.hpp"
#include "optimize/reward.hpp"
#include "optimize/stand_in_judge.hpp"
#include "optimize/temp_home.hpp"
#include "optimize/trajectory.hpp"
#include "optimize/trajectory_claims.hpp"

namespace blaster {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

class TrajectoryVerify : public ::testing::Test {
 protected:
  testing::temp_home home_{"trajectory"};
  store records_{home_.path() / "home"};
  stand_in_judge judge_{records_};

  // A proposer that answers each request with the next line of `replies`, and logs every
  // request it read on its standard error (proposer.log) and every reply it wrote to
  // replies-sent.txt in its own folder... which its box removes: so it logs the replies to
  // standard error too, after a tab.
  optimize_options session(const std::vector<std::string>& replies, int steps) {
    static int sessions = 0;
    const auto replies_file = home_.path() / ("replies-" + std::to_string(++sessions) + ".txt");
    std::string text;
    for (const auto& r : replies) text += r + "\n";
    write_file_atomically(replies_file, text);
    optimize_options o;
    o.command = "blaster optimize --task rmsnorm --proposer scripted";
    o.proposer = "exec 3< '" + replies_file.string() +
                 "'; while IFS= read -r request; do printf 'IN\\t%s\\n' \"$request\" >&2; "
                 "IFS= read -r reply <&3 || exit 0; printf 'OUT\\t%s\\n' \"$reply\" >&2; "
                 "printf '%s\\n' \"$reply\"; done";
    o.box.keeper = BLASTER_BINARY;
    o.task = brief_of(BLASTER_SOURCE_DIR, "rmsnorm", "");
    o.steps = steps;
    o.reply_deadline = 5000ms;
    o.scratch = home_.path() / "scratch";
    return o;
  }

  // What the proposer read (IN) and wrote (OUT), line by line, in order.
  static std::vector<std::pair<std::string, std::string>> transcript(const optimize_result& r) {
    std::vector<std::pair<std::string, std::string>> out;
    std::ifstream in(r.folder / "proposer.log");
    for (std::string line; std::getline(in, line);) {
      const auto tab = line.find('\t');
      if (tab == std::string::npos) continue;
      out.emplace_back(line.substr(0, tab), line.substr(tab + 1));
    }
    return out;
  }

  std::filesystem::path exported(const optimize_result& r, const std::string& name = "bundle") {
    const auto out = home_.path() / name;
    static_cast<void>(export_trajectories(records_, {r.run_id}, out, nullptr));
    return out;
  }

  static bundle_verification verified(const std::filesystem::path& bundle) {
    bundle_verification v = verify_bundle(bundle, nullptr);
    check_run_records(v);
    check_trajectory_claims(v);
    return v;
  }

  // Whether the bundle passes every check but the trajectory's claims: a forger's work that only
  // recomputing the claims can catch.
  static bool consistent_but_for_claims(const std::filesystem::path& bundle) {
    bundle_verification v = verify_bundle(bundle, nullptr);
    check_run_records(v);
    if (!v.ok()) std::cerr << problems(v);
    return v.ok();
  }

  static std::string problems(const bundle_verification& v) {
    std::string text;
    for (const auto& p : v.problems) text += p.path + ": " + p.detail + "\n";
    return text;
  }

  // Rewrites `relative` in the bundle and lists every file with its new digest in SHA256SUMS
  // (files the forger added too), as a forger with no key would.
  static void forge(const std::filesystem::path& bundle, const std::string& relative,
                    const std::string& bytes) {
    write_file_atomically(bundle / relative, bytes);
    std::vector<sha256sums_entry> entries;
    for (const auto& f : std::filesystem::recursive_directory_iterator(bundle)) {
      const std::string path = std::filesystem::relative(f.path(), bundle).generic_string();
      if (!f.is_regular_file() || path.rfind("SHA256SUMS", 0) == 0) continue;
      entries.push_back({.sha256 = sha256_file_hex(f.path()), .path = path});
    }
    std::sort(entries.begin(), entries.end(),
              [](const auto& a, const auto& b) { return a.path < b.path; });
    write_file_atomically(bundle / "SHA256SUMS", format_sha256sums(entries));
  }

  // A forger who changes the session's records (`mutate` gets session.json and run.json) and
  // everything that follows from them: the run's report digest and its object, the trajectory
  // rendered again from the forged records, and SHA256SUMS.
  static void forge_records(const std::filesystem::path& bundle, std::int64_t run,
                            const std::function<void(json& session, json& rows)>& mutate) {
    const std::string folder = "sessions/" + std::to_string(run);
    json session = json::parse(read_file(bundle / folder / "session.json"));
    json rows = json::parse(read_file(bundle / folder / "run.json"));
    mutate(session, rows);
    const std::string session_bytes = session.dump(1);
    rows.at("runs")[0]["report_sha256"] = sha256_hex(session_bytes);
    write_file_atomically(bundle / folder / "session.json", session_bytes);
    write_file_atomically(bundle / "objects" / sha256_hex(session_bytes), session_bytes);
    write_file_atomically(bundle / folder / "run.json", rows.dump(1) + "\n");
    session_records s{.run_id = run,
                      .session = session,
                      .session_sha256 = sha256_hex(session_bytes),
                      .steps = {}};
    for (const json& row : rows.at("optimize_steps")) s.steps.push_back(attempt_from_row(row));
    const json t = render_trajectory(s, [&](const std::string& digest) {
      return read_file_if_exists(bundle / "objects" / digest);
    });
    forge(bundle, "trajectories.jsonl", t.dump() + "\n");
  }

  static json& row_of(json& rows, int step) {
    for (json& row : rows.at("optimize_steps")) {
      if (row.at("step") == step) return row;
    }
    throw std::runtime_error("no row of step " + std::to_string(step));
  }

  std::vector<std::string> session_replies() {
    return {"this is not JSON {", candidate("COMPILE_ERROR", "typo", {"fix"}),
            candidate("FAST 1.5", "vectorize", {"vectorize"}), candidate("WRONG", "skip"),
            candidate("FAST 1.25", "retune"), R"({"stop": true, "why": "done"})"};
  }
};

TEST_F(TrajectoryVerify, TheExportedMessagesAreTheLinesTheProposerReadAndWrote) {
  const auto r = run_optimize(session(session_replies(), 10), records_, judge_);
  ASSERT_EQ(r.ended, "proposer_stopped") << r.why;
  const auto lines = transcript(r);
  ASSERT_EQ(lines.size(), 12U);  // five steps and the stop, each a request and a reply

  const json t = trajectory_of(records_, r.run_id);
  const json& messages = t.at("messages");
  ASSERT_EQ(messages.size(), 1U + lines.size());
  EXPECT_EQ(messages[0].at("role"), "system");
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const json& turn = messages[i + 1];
    EXPECT_EQ(turn.at("role"), lines[i].first == "IN" ? "user" : "assistant") << i;
    EXPECT_EQ(turn.at("content").get<std::string>(), lines[i].second) << "turn " << i + 1;
    EXPECT_EQ(turn.at("blaster_sha256"), sha256_hex(lines[i].second)) << i;
  }
  // What was no candidate is flagged: the invalid reply and the stop; the candidates are not.
  EXPECT_EQ(messages[2].value("blaster_not_a_candidate", false), true);
  EXPECT_EQ(messages[2].at("blaster_step"), 1);
  EXPECT_EQ(messages[4].value("blaster_not_a_candidate", false), false);
  EXPECT_EQ(messages[12].value("blaster_not_a_candidate", false), true);
  EXPECT_FALSE(messages[12].contains("blaster_step"));
  // The compile log reached the proposer, and the export shows it where it did.
  EXPECT_NE(messages[5].at("content").get<std::string>().find("oops"), std::string::npos);
  // Every step row cites its request and its reply.
  for (const attempt& a : optimization_memory(records_).steps_of(r.run_id)) {
    EXPECT_EQ(records_.cas().get(a.request_sha256), lines[2 * (a.step - 1)].second) << a.step;
    EXPECT_EQ(records_.cas().get(a.reply_sha256), lines[2 * (a.step - 1) + 1].second) << a.step;
  }

  // The format's types: params as numbers, the kernel's own parameter list, the short GPU name.
  EXPECT_EQ(t.at("trace")[2].at("params"), json({{"VEC", 4}}));
  EXPECT_EQ(t.at("signature"),
            "__half* out, const __half* x, int batches, int channels, int plane, float eps");
  EXPECT_EQ(t.at("gpu"), "H200");
}

TEST_F(TrajectoryVerify, AnHonestExportVerifies) {
  const auto r = run_optimize(session(session_replies(), 10), records_, judge_);
  const auto bundle = exported(r);
  const auto v = verified(bundle);
  EXPECT_TRUE(v.ok()) << problems(v);
}

// The issue's forgery: every step ok, reward 5, best 99x, SHA256SUMS recomputed.
TEST_F(TrajectoryVerify, AForgedTrajectoryFailsWithTheStepThatDiffers) {
  const auto r = run_optimize(session(session_replies(), 10), records_, judge_);
  const auto bundle = exported(r);
  json t = json::parse(read_file(bundle / "trajectories.jsonl"));
  for (json& step : t.at("trace")) {
    step["status"] = "ok";
    step["reward"] = 5.0;
  }
  t["best"] = {{"step", 3}, {"time_ms", 0.001}, {"speedup", 99.0}};
  forge(bundle, "trajectories.jsonl", t.dump() + "\n");
  ASSERT_TRUE(verify_bundle(bundle, nullptr).ok()) << "the forger's SHA256SUMS holds";

  const auto v = verified(bundle);
  EXPECT_FALSE(v.ok());
  const std::string said = problems(v);
  EXPECT_NE(said.find("trajectories.jsonl: session " + std::to_string(r.run_id) +
                      " step 1: trace status is \"ok\", the records give \"compileerror\""),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("step 3: trace reward is 5.0"), std::string::npos) << said;
  EXPECT_NE(said.find("best is"), std::string::npos) << said;
}

// A forger who edits the session's rows too, and renders the trajectory from them, is caught by
// the judging runs: the step's numbers are not what its run's report gives.
TEST_F(TrajectoryVerify, ForgedStepRowsFailAgainstTheirJudgingRun) {
  const auto r = run_optimize(session(session_replies(), 10), records_, judge_);
  const auto bundle = exported(r);
  const auto rows_file = "sessions/" + std::to_string(r.run_id) + "/run.json";
  json rows = json::parse(read_file(bundle / rows_file));
  for (json& row : rows.at("optimize_steps")) {
    if (row.at("step") == 3) row["reward"] = 5.0;
  }
  forge(bundle, rows_file, rows.dump(1) + "\n");
  session_records s{.run_id = r.run_id,
                    .session = json::parse(read_file(bundle / "sessions" /
                                                     std::to_string(r.run_id) / "session.json")),
                    .session_sha256 = {},
                    .steps = {}};
  s.session_sha256 = sha256_hex(s.session.dump(1));
  for (const json& row : rows.at("optimize_steps")) s.steps.push_back(attempt_from_row(row));
  json t = render_trajectory(s, [&](const std::string& digest) {
    return std::optional<std::string>(read_file(bundle / "objects" / digest));
  });
  t["blaster_session_sha256"] = json::parse(read_file(bundle / "trajectories.jsonl"))
                                    .at("blaster_session_sha256");
  forge(bundle, "trajectories.jsonl", t.dump() + "\n");

  const auto v = verified(bundle);
  const std::string said = problems(v);
  EXPECT_NE(said.find("step 3: reward is 5.0, runs/"), std::string::npos) << said;
}

// The baseline's time a trajectory states (baseline_ms) is the session's, which is held to the
// run that timed the baseline alone and to the steps' judging runs: a forger who doubles it in
// the session's record too, and renders the row again, is caught by those runs.
TEST_F(TrajectoryVerify, AForgedBaselineTimeFailsAgainstTheRunThatTimedIt) {
  const auto r = run_optimize(session(session_replies(), 10), records_, judge_);
  ASSERT_EQ(r.baselines.size(), 1U);
  const std::int64_t timed = r.baselines[0].bench_run_id;
  ASSERT_GT(timed, 0);
  const auto bundle = exported(r);
  ASSERT_TRUE(std::filesystem::exists(bundle / "runs" / std::to_string(timed) / "results.json"));
  ASSERT_TRUE(verified(bundle).ok()) << problems(verified(bundle));

  // The row alone.
  json t = json::parse(read_file(bundle / "trajectories.jsonl"));
  const double baseline_ms = t.at("baseline_ms").get<double>();
  t["baseline_ms"] = 2 * baseline_ms;
  forge(bundle, "trajectories.jsonl", t.dump() + "\n");
  EXPECT_NE(problems(verified(bundle)).find("baseline_ms is"), std::string::npos);

  // The session's record with it: its baseline time and the baseline timed alone.
  forge_records(bundle, r.run_id, [](json& session, json&) {
    session["baseline_us"] = 2 * session.at("baseline_us").get<double>();
    for (json* b : {&session.at("baseline"), &session.at("baselines")[0]}) {
      (*b)["time_us"] = 2 * b->at("time_us").get<double>();
    }
  });
  ASSERT_TRUE(consistent_but_for_claims(bundle)) << "the forger's SHA256SUMS and records hold";
  ASSERT_EQ(json::parse(read_file(bundle / "trajectories.jsonl")).at("baseline_ms"),
            2 * baseline_ms);
  const std::string said = problems(verified(bundle));
  const std::string session_json = "sessions/" + std::to_string(r.run_id) + "/session.json: ";
  EXPECT_NE(said.find(session_json +
                      fmt::format("session {}: baseline 1 (run {}): time_us is ", r.run_id, timed)),
            std::string::npos)
      << said;
  EXPECT_NE(said.find(fmt::format("runs/{}/results.json gives", timed)), std::string::npos) << said;
  EXPECT_NE(said.find(session_json + fmt::format("session {}: baseline_us is ", r.run_id)),
            std::string::npos)
      << said;
}

// The baseline's time the first request carried is the one timed alone: a request rewritten to
// say otherwise (its object, its digest in the step's row and the messages) does not verify.
TEST_F(TrajectoryVerify, ARequestCarryingAnotherBaselineTimeFails) {
  const auto r = run_optimize(session(session_replies(), 10), records_, judge_);
  const auto bundle = exported(r);
  forge_records(bundle, r.run_id, [&](json& session, json& rows) {
    json& row = row_of(rows, 1);
    json request = json::parse(read_file(bundle / "objects" / row.at("request_sha256")));
    ASSERT_TRUE(request.at("baseline_us").is_number());
    request["baseline_us"] = 1.0;
    const std::string bytes = request.dump();
    write_file_atomically(bundle / "objects" / sha256_hex(bytes), bytes);
    row["request_sha256"] = sha256_hex(bytes);
    session.at("steps")[0]["request_sha256"] = sha256_hex(bytes);
  });
  ASSERT_TRUE(consistent_but_for_claims(bundle));
  const std::string said = problems(verified(bundle));
  EXPECT_NE(said.find(fmt::format("session {} step 1: its request carried baseline_us 1.0, its "
                                  "baseline's run (runs/{}/results.json)",
                                  r.run_id, r.baselines.at(0).bench_run_id)),
            std::string::npos)
      << said;
}

// The memory's keys of each step (the GPU that judged it, its bound, the bound it set out to
// improve and its parent) and the session's device (the trajectory's gpu and arch) are held to
// the judging runs and the requests: a forger who moves the session to another card, or edits
// the keys in the rows and the session's record alike, is named step by step.
TEST_F(TrajectoryVerify, ForgedGpuAndBoundsFailAgainstTheJudgingRuns) {
  const auto r = run_optimize(session(session_replies(), 10), records_, judge_);
  ASSERT_EQ(r.steps.at(4).parent, 3);
  const auto bundle = exported(r);
  forge_records(bundle, r.run_id, [](json& session, json& rows) {
    session.at("device")["name"] = "NVIDIA B200";
    session.at("device")["model"] = "B200";
    for (json* step : {&row_of(rows, 3), &session.at("steps")[2]}) {
      (*step)["gpu"] = "B200";
      (*step)["bound"] = "compute-bound";
      (*step)["improved_bound"] = "compute-bound";
    }
    row_of(rows, 1)["gpu"] = "B200";
    session.at("steps")[0]["gpu"] = "B200";
    row_of(rows, 5)["parent_step"] = 4;
    session.at("steps")[4]["parent"] = 4;
  });
  EXPECT_EQ(json::parse(read_file(bundle / "trajectories.jsonl")).at("gpu"), "B200");
  ASSERT_TRUE(consistent_but_for_claims(bundle));
  const std::string said = problems(verified(bundle));
  const std::string where =
      "sessions/" + std::to_string(r.run_id) + "/run.json: session " + std::to_string(r.run_id);
  const std::string judged_by = fmt::format("runs/{}/results.json", r.steps.at(2).bench_run_id);
  for (const std::string& expected :
       {where + " step 3: gpu is \"B200\", " + judged_by + " gives \"H200\"",
        where + " step 3: bound is \"compute-bound\", " + judged_by + " gives \"unknown\"",
        where + " step 3: improved_bound is \"compute-bound\", runs/",
        where + " step 1: gpu is \"B200\", the session's device gives \"H200\"",
        where + " step 5: parent is 4, its request's best is step 3",
        fmt::format("session {}: device name is \"NVIDIA B200\", its judging runs give "
                    "\"NVIDIA H200\"",
                    r.run_id)}) {
    EXPECT_NE(said.find(expected), std::string::npos) << expected << "\n" << said;
  }
}

// An export whose rows predate the transcripts says so, rather than listing every difference.
TEST_F(TrajectoryVerify, AnExportOfRowsWithoutTranscriptsSaysWhyItCannotBeRecomputed) {
  const auto r = run_optimize(session(session_replies(), 10), records_, judge_);
  const auto bundle = exported(r);
  const auto rows_file = "sessions/" + std::to_string(r.run_id) + "/run.json";
  json rows = json::parse(read_file(bundle / rows_file));
  for (json& row : rows.at("optimize_steps")) row.erase("request_sha256");
  forge(bundle, rows_file, rows.dump(1) + "\n");
  const auto v = verified(bundle);
  EXPECT_FALSE(v.ok());
  EXPECT_NE(problems(v).find("cannot be recomputed; export it again"), std::string::npos)
      << problems(v);
}

TEST_F(TrajectoryVerify, TheRewardIsTheProtocolsWhateverSessionsAReplyAsksFor) {
  const auto asking = [](const std::string& says, int sessions) {
    json reply = json::parse(candidate(says, "same kernel"));
    if (sessions > 0) reply["sessions"] = sessions;
    return reply.dump();
  };
  const auto r = run_optimize(session({asking("FAST 1.5", 0), asking("FAST 1.5", 1),
                                       asking("FAST 1.5", 32), asking("FAST 1.5", 8)},
                                      4),
                              records_, judge_);
  ASSERT_EQ(r.steps.size(), 4U);
  const auto steps = optimization_memory(records_).steps_of(r.run_id);
  ASSERT_EQ(steps.size(), 4U);
  // The stand-in's sessions and bootstrap seed are the same for the same source: whatever
  // number of sessions was asked for, the reward is the same number.
  for (const attempt& a : steps) {
    EXPECT_EQ(a.reward_sessions, 3) << a.step;
    EXPECT_GT(a.reward, 1.0) << a.step;
    EXPECT_EQ(a.reward, steps[0].reward) << a.step;
  }
  EXPECT_EQ(steps[1].sessions, 1);
  EXPECT_EQ(steps[2].sessions, 32);
  // Asking for 32 sessions narrowed the interval recorded beside the reward ...
  const double wide = *steps[0].speedup_high - *steps[0].speedup_low;
  const double narrow = *steps[2].speedup_high - *steps[2].speedup_low;
  EXPECT_LT(narrow, wide);
  // ... and the reward is the protocol's: the first three sessions' interval, not the 32's.
  EXPECT_NE(steps[2].reward, *steps[2].speedup_low);
  // One session asked for is timed in three: a screen's reward is not 0.
  EXPECT_GT(steps[1].reward, 0.0);
  const auto sent = transcript(r);
  EXPECT_EQ(json::parse(sent[2].second).at("attempts")[0].at("reward_sessions"), 3);
  const auto v = verified(exported(r));
  EXPECT_TRUE(v.ok()) << problems(v);
}

TEST(ProtocolReward, IsTheBootstrapsLowEndOverTheFirstSessionsOnly) {
  const std::vector<double> baseline = {100, 102, 98, 101, 99, 100};
  const std::vector<double> candidate = {50, 51, 49, 40, 40, 40};
  const auto three = protocol_reward(baseline, candidate, 7, 3);
  ASSERT_TRUE(three.has_value());
  EXPECT_EQ(*three, bootstrap_speedup(std::span(baseline).first(3), std::span(candidate).first(3),
                                      7, reward_resamples, reward_confidence)
                        .low);
  // Later sessions, however fast, do not move it.
  std::vector<double> faster = candidate;
  faster[5] = 1.0;
  EXPECT_EQ(protocol_reward(baseline, faster, 7, 3), three);
  // Too few sessions, or a protocol of one, gives no reward.
  EXPECT_FALSE(protocol_reward(std::span(baseline).first(2), std::span(candidate).first(2), 7, 3));
  EXPECT_FALSE(protocol_reward(baseline, candidate, 7, 1));
}

TEST(KernelSignature, IsTheKernelsParameterListInArgumentOrder) {
  const std::string source =
      "/* blaster\n{\"launch\": [{\"kernel\": \"k<VEC>\", \"grid\": 1, \"block\": 32, \"args\": "
      "[\"y\", \"x\", \"n\"]}]}\n*/\ntemplate <int VEC>\n__global__ void k(float*   y,\n  const "
      "float* x, int n) {}\n";
  EXPECT_EQ(kernel_signature(source, json::object()), "float* y, const float* x, int n");
  // No definition to read: the plan's args with the task's types, in the plan's order.
  const json contract = {{"buffers", {{"x", {{"dtype", "f16"}}}, {"y", {{"dtype", "f32"}}}}},
                         {"symbols", {{"n", {{"type", "i32"}}}}}};
  EXPECT_EQ(kernel_signature(source.substr(0, source.find("template")), contract),
            "f32* y, f16* x, i32 n");
  EXPECT_EQ(params_as_numbers({{"VEC", "4"}, {"ALPHA", "0.5"}, {"MODE", "fast"}}),
            json({{"VEC", 4}, {"ALPHA", 0.5}, {"MODE", "fast"}}));
}

}  // namespace
}  // namespace blaster
