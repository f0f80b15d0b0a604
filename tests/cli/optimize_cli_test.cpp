// blaster optimize, memory and trajectories export as a user runs them, with a scripted proposer
// on rmsnorm: a reply that is not JSON, a source that does not compile, then the baseline's own
// source. With a GPU the last is judged; without one the session ends there with exit 3. Either
// way every step is in the memory and the session exports as a bundle that verify accepts.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/run_blaster.hpp"
#include "core/cuda_driver.hpp"
#include "core/file_confinement.hpp"
#include "core/file_io.hpp"
#include "core/sha256.hpp"
#include "evidence/sha256sums.hpp"

namespace blaster {
namespace {

using json = nlohmann::json;

class OptimizeCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("blaster-optimize-cli-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::filesystem::remove_all(dir_);
    if (!marker_.empty()) std::filesystem::remove(marker_);
  }
  testing::command_result run(const std::string& args) const {
    return testing::run_blaster(BLASTER_SOURCE_DIR, dir_ / "home", args, dir_ / "stderr.txt");
  }
  // A proposer that answers request n with line n of `replies`.
  std::string proposer(const std::vector<std::string>& replies) const {
    std::string text;
    for (const auto& r : replies) text += r + "\n";
    write_file_atomically(dir_ / "replies.txt", text);
    return "exec 3< " + (dir_ / "replies.txt").string() +
           "; while IFS= read -r request; do IFS= read -r reply <&3 || exit 0; printf "
           "\"%s\\\\n\" \"$reply\"; done";
  }
  std::filesystem::path dir_;
  std::filesystem::path marker_;  // a file a hostile proposer tried to drop into the checkout
};

TEST_F(OptimizeCli, AScriptedSessionIsRecordedAndExportsAsAVerifiedTrajectory) {
  const std::string baseline =
      read_file(std::filesystem::path(BLASTER_SOURCE_DIR) / "tasks" / "rmsnorm" / "init.cu");
  std::string broken = baseline;
  broken.replace(broken.find("__global__"), 10, "__global__ undefined_type");
  const std::string command = proposer(
      {"not json at all", json{{"source", broken}, {"hypothesis", "a typo"}, {"tags", {"fix"}}}.dump(),
       json{{"source", baseline}, {"hypothesis", "the baseline itself"}}.dump()});
  const auto r = run("optimize --task rmsnorm --steps 3 --sessions 2 --no-profile --proposer '" +
                     command + "'");
  const bool gpu = cuda::driver_unavailable_reason().empty();
  if (gpu) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
  } else {
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("judging a candidate needs a GPU"), std::string::npos) << r.err;
  }
  const auto memory = run("memory --task rmsnorm --json");
  ASSERT_EQ(memory.exit_code, 0) << memory.err;
  const json steps = json::parse(memory.out);
  ASSERT_EQ(steps.size(), 3U) << memory.out;
  std::map<int, json> by_step;
  for (const auto& s : steps) by_step[s.at("step").get<int>()] = s;
  EXPECT_EQ(by_step[1].at("reason"), "invalid_reply");
  EXPECT_EQ(by_step[2].at("status"), "compileerror");
  EXPECT_EQ(by_step[2].at("reason"), "compile_error");
  EXPECT_EQ(by_step[2].at("tags"), json({"fix"}));
  EXPECT_EQ(by_step[3].at("status"), gpu ? "ok" : "unjudged");

  const auto tagged = run("memory --tag fix");
  EXPECT_EQ(tagged.exit_code, 0);
  EXPECT_NE(tagged.out.find("a typo"), std::string::npos) << tagged.out;
  EXPECT_EQ(tagged.out.find("the baseline itself"), std::string::npos) << tagged.out;

  const auto out = dir_ / "trajectory";
  const auto exported = run("trajectories export --run latest --out " + out.string());
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  const std::string lines = read_file(out / "trajectories.jsonl");
  const json t = json::parse(lines.substr(0, lines.find('\n')));
  EXPECT_EQ(t.at("op"), "rmsnorm");
  EXPECT_EQ(t.at("num_steps"), gpu ? 3 : 2);
  EXPECT_EQ(t.at("trace")[0].at("status"), "compileerror");
  EXPECT_EQ(t.at("trace")[1].at("reason"), "compile_error");
  if (gpu) {
    EXPECT_EQ(t.at("trace")[2].at("status"), "ok");
  }
  const auto verified = run("verify " + out.string());
  EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
  const auto honest_merge = testing::run_blaster(BLASTER_SOURCE_DIR, dir_ / "honest-home",
                                                 "merge " + out.string(), dir_ / "stderr.txt");
  EXPECT_EQ(honest_merge.exit_code, 0) << honest_merge.out << honest_merge.err;

  // A row edited after the export, SHA256SUMS recomputed: verify renders the row again from the
  // bundle's records and names the step and the field that differ.
  json forged = t;
  for (json& step : forged.at("trace")) {
    step["status"] = "ok";
    step["reward"] = 5.0;
  }
  write_file_atomically(out / "trajectories.jsonl", forged.dump() + "\n");
  auto entries = parse_sha256sums(read_file(out / "SHA256SUMS"));
  for (auto& e : entries) e.sha256 = sha256_file_hex(out / e.path);
  write_file_atomically(out / "SHA256SUMS", format_sha256sums(entries));
  const auto refused = run("verify " + out.string());
  EXPECT_EQ(refused.exit_code, 4) << refused.out << refused.err;
  EXPECT_NE(refused.out.find("step 1: trace status is \"ok\", the records give \"compileerror\""),
            std::string::npos)
      << refused.out;
  EXPECT_NE(refused.out.find("step 2: trace reward is 5.0, the records give 0.0"),
            std::string::npos)
      << refused.out;
  // Nor does merge take it into a home.
  const auto merged = testing::run_blaster(BLASTER_SOURCE_DIR, dir_ / "forged-home",
                                           "merge " + out.string(), dir_ / "stderr.txt");
  EXPECT_EQ(merged.exit_code, 2) << merged.out << merged.err;
  EXPECT_NE(merged.err.find("claim trajectories.jsonl"), std::string::npos) << merged.err;

  // A bench run is not a session.
  const auto wrong = run("trajectories export --run 2 --out " + (dir_ / "other").string());
  EXPECT_EQ(wrong.exit_code, 2) << wrong.err;
  EXPECT_NE(wrong.err.find("not an optimize, serve or eval session"), std::string::npos) << wrong.err;
}

// Before the first request the baseline is timed alone, in a bench run the session names: with
// a GPU the first request carries the device (its model and measured ceilings) and the
// baseline's time; without one both are null and the session ends as it did (exit 3). The
// memory names each step's GPU and bounds, in its table and in its JSON.
TEST_F(OptimizeCli, TheFirstRequestCarriesTheDeviceAndTheBaselineWhereThereIsAGpu) {
  const std::string baseline =
      read_file(std::filesystem::path(BLASTER_SOURCE_DIR) / "tasks" / "rmsnorm" / "init.cu");
  write_file_atomically(dir_ / "replies.txt", json{{"source", baseline}}.dump() + "\n");
  // Each request it reads goes to its standard error, which is proposer.log.
  const std::string logging = "exec 3< " + (dir_ / "replies.txt").string() +
                              "; while IFS= read -r request; do printf \"%s\\\\n\" "
                              "\"$request\" >&2; IFS= read -r reply <&3 || exit 0; printf "
                              "\"%s\\\\n\" \"$reply\"; done";
  const auto r = run("optimize --task rmsnorm --steps 1 --sessions 2 --no-profile --json "
                     "--proposer '" + logging + "'");
  const bool gpu = cuda::driver_unavailable_reason().empty();
  EXPECT_EQ(r.exit_code, gpu ? 0 : 3) << r.err;
  const json session = json::parse(r.out);
  const json& timed = session.at("baseline");
  EXPECT_GT(timed.at("bench_run_id").get<int>(), session.at("run_id").get<int>()) << timed.dump();
  EXPECT_EQ(session.at("steps").size(), 1U) << "the baseline's timing is no step";
  std::ifstream log(dir_ / "home" / "optimize" /
                    fmt::format("run-{}", session.at("run_id").get<int>()) / "proposer.log");
  std::string line;
  ASSERT_TRUE(std::getline(log, line));
  const json first = json::parse(line);
  if (gpu) {
    const json& device = first.at("device");
    EXPECT_FALSE(device.at("model").get<std::string>().empty()) << device.dump();
    EXPECT_GT(device.at("sm_count").get<int>(), 0);
    EXPECT_GT(device.at("ceilings").at("dram_copy_gbs").get<double>(), 0.0);
    EXPECT_GT(first.at("baseline_us").get<double>(), 0.0);
    EXPECT_EQ(first.at("baseline_us"), timed.at("time_us"));
  } else {
    EXPECT_TRUE(first.at("device").is_null()) << first.at("device").dump();
    EXPECT_TRUE(first.at("baseline_us").is_null());
    EXPECT_FALSE(timed.at("message").get<std::string>().empty()) << timed.dump();
  }

  // The export carries the run that timed the baseline, beside the steps' judging runs.
  const auto out = dir_ / "trajectory";
  ASSERT_EQ(run("trajectories export --run latest --out " + out.string()).exit_code, 0);
  EXPECT_TRUE(std::filesystem::exists(
      out / "runs" / std::to_string(timed.at("bench_run_id").get<int>()) / "SHA256SUMS"));
  const auto verified = run("verify " + out.string());
  EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;

  const auto memory = run("memory --json");
  ASSERT_EQ(memory.exit_code, 0) << memory.err;
  const json entries = json::parse(memory.out);
  ASSERT_EQ(entries.size(), 1U);
  for (const char* key : {"gpu", "bound", "improved_bound"}) {
    EXPECT_TRUE(entries[0].contains(key)) << key << ": " << entries[0].dump();
  }
  const auto table = run("memory");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  const std::string header = table.out.substr(0, table.out.find('\n'));
  for (const char* column : {"gpu", "improved", "bound"}) {
    EXPECT_NE(header.find(column), std::string::npos) << column << ": " << header;
  }
}

// With two GPUs named, each step is judged by an evaluator of its own (writing its judging runs
// through a store connection of its own) and the steps are recorded in order; compile errors
// are judged with or without a GPU, so this runs anywhere.
TEST_F(OptimizeCli, WithTwoGpusTheStepsAreJudgedSideBySideAndRecordedInOrder) {
  if (cuda::driver_unavailable_reason().empty()) {
    const json doctor = json::parse(run("doctor --json").out);
    if (doctor.value("gpus", json::array()).size() < 2) {
      GTEST_SKIP() << "GPUs 0 and 1 are named: this machine has one";
    }
  }
  const std::string broken = "/* blaster {\"launch\": [{\"kernel\": \"k\", \"grid\": 1, "
                             "\"block\": 1, \"args\": []}]} */ oops";
  const auto r = run("optimize --task rmsnorm --gpus 0,1 --steps 3 --no-profile --json "
                     "--proposer '" +
                     proposer({json{{"source", broken}, {"hypothesis", "one"}}.dump(),
                               json{{"source", broken + " "}, {"hypothesis", "two"}}.dump(),
                               json{{"source", broken + "  "}, {"hypothesis", "three"}}.dump()}) +
                     "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const json session = json::parse(r.out);
  ASSERT_EQ(session.at("steps").size(), 3U) << r.out;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(session.at("steps")[i].at("step"), i + 1);
    EXPECT_EQ(session.at("steps")[i].at("reason"), "compile_error") << session.at("steps")[i];
  }
  EXPECT_EQ(session.at("steps")[2].at("hypothesis"), "three");
  const auto out = dir_ / "trajectory";
  ASSERT_EQ(run("trajectories export --run latest --out " + out.string()).exit_code, 0);
  const auto verified = run("verify " + out.string());
  EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
}

// blaster killed mid-session (kill -9): --resume goes on from the last recorded step, as the same
// run with a new proposer, and the session exports as one trajectory that verifies. What cannot
// be resumed is refused with exit 2 and the run named.
TEST_F(OptimizeCli, AKilledSessionResumesAsOneSession) {
  const std::string baseline =
      read_file(std::filesystem::path(BLASTER_SOURCE_DIR) / "tasks" / "rmsnorm" / "init.cu");
  std::string broken = baseline;
  broken.replace(broken.find("__global__"), 10, "__global__ undefined_type");
  const auto replies = dir_ / "replies.txt";
  write_file_atomically(replies, "not json\n" +
                                     json{{"source", broken}, {"hypothesis", "a typo"}}.dump() +
                                     "\nSLEEP\n");
  const std::string command =
      "exec 3< " + replies.string() +
      "; while IFS= read -r request; do printf '%s\\n' \"$request\" >&2; IFS= read -r reply <&3 "
      "|| exit 0; [ \"$reply\" = SLEEP ] && sleep 300; printf '%s\\n' \"$reply\"; done";
  const auto home = dir_ / "home";
  const pid_t blaster = ::fork();
  if (blaster == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
    ::execl(BLASTER_BINARY, BLASTER_BINARY, "--root", BLASTER_SOURCE_DIR, "--home", home.c_str(),
            "optimize", "--task", "rmsnorm", "--steps", "4", "--sessions", "2", "--no-profile",
            "--reply-timeout", "600", "--proposer", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // The third request is written once the second step is recorded.
  const auto log = home / "optimize" / "run-1" / "proposer.log";
  int lines = 0;
  for (int i = 0; i < 1200 && lines < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::ifstream in(log);
    lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
  }
  ASSERT_EQ(lines, 3) << "the session did not reach its third request";
  ::kill(blaster, SIGKILL);
  int status = 0;
  ::waitpid(blaster, &status, 0);

  // Settings are the session's own; a flag that would change them, or another task, is refused.
  const auto steps = run("optimize --resume 1 --steps 9");
  EXPECT_EQ(steps.exit_code, 2) << steps.err;
  EXPECT_NE(steps.err.find("--steps with --resume: run 1 goes on with the settings it was started "
                           "with"),
            std::string::npos)
      << steps.err;
  const auto other = run("optimize --task softmax --resume 1");
  EXPECT_EQ(other.exit_code, 2) << other.err;
  EXPECT_NE(other.err.find("run 1 optimizes rmsnorm, not softmax"), std::string::npos) << other.err;

  write_file_atomically(replies, json{{"source", broken}, {"hypothesis", "a second typo"}}.dump() +
                                     "\n{\"stop\": true}\n");
  const auto resumed = run("optimize --resume latest --json");
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
  const json session = json::parse(resumed.out);
  EXPECT_EQ(session.at("run_id"), 1);
  EXPECT_EQ(session.at("ended"), "proposer_stopped");
  ASSERT_EQ(session.at("steps").size(), 3U) << resumed.out;
  EXPECT_EQ(session.at("steps")[2].at("step"), 3);
  EXPECT_EQ(session.at("steps")[2].at("hypothesis"), "a second typo");
  // The new proposer's first request: step 3, with both steps before it.
  std::ifstream in(log);
  std::vector<json> requests;
  for (std::string line; std::getline(in, line);) requests.push_back(json::parse(line));
  ASSERT_EQ(requests.size(), 5U);
  EXPECT_EQ(requests[3].at("step"), 3);
  EXPECT_EQ(requests[3].at("steps_left"), 2);
  ASSERT_EQ(requests[3].at("attempts").size(), 2U);
  EXPECT_EQ(requests[3].at("attempts")[1].at("hypothesis"), "a typo");

  const auto out = dir_ / "trajectory";
  ASSERT_EQ(run("trajectories export --run 1 --out " + out.string()).exit_code, 0);
  const std::string rows = read_file(out / "trajectories.jsonl");
  EXPECT_EQ(std::count(rows.begin(), rows.end(), '\n'), 1) << "one session";
  EXPECT_EQ(json::parse(rows).at("num_steps"), 3);
  const auto verified = run("verify " + out.string());
  EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;

  const auto again = run("optimize --resume 1");
  EXPECT_EQ(again.exit_code, 2) << again.err;
  EXPECT_NE(again.err.find("run 1 finished (the proposer asked to stop)"), std::string::npos)
      << again.err;
  const auto missing = run("optimize --resume 99");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("run 99 does not exist"), std::string::npos) << missing.err;
  const auto bench = run("optimize --resume 2");
  EXPECT_EQ(bench.exit_code, 2);
  EXPECT_NE(bench.err.find("run 2 is not an optimize session"), std::string::npos) << bench.err;
}

// The built-in search proposes each configuration of the task's candidate files, pinned, with
// one timing session; blaster itself is the proposer process.
TEST_F(OptimizeCli, TheParamsProposerScreensEachConfigurationInOneSession) {
  const auto r = run("optimize --task rmsnorm --proposer params --steps 2 --no-profile --json");
  const bool gpu = cuda::driver_unavailable_reason().empty();
  EXPECT_EQ(r.exit_code, gpu ? 0 : 3) << r.err;
  const json session = json::parse(r.out);
  const json& steps = session.at("steps");
  ASSERT_EQ(steps.size(), gpu ? 2U : 1U) << r.out;
  EXPECT_EQ(steps[0].at("hypothesis"),
            "rmsnorm_vec_regs[VEC=4,BLOCK=128]: round 1 of successive halving, 1 session");
  EXPECT_EQ(steps[0].at("sessions"), 1);
  EXPECT_EQ(steps[0].at("tags"), json({"params", "round-1"}));
  if (gpu) {
    EXPECT_EQ(steps[0].at("variant"),
              "candidate-" + steps[0].at("source_sha256").get<std::string>().substr(0, 12) +
                  "[VEC=4,BLOCK=128]");
    EXPECT_EQ(steps[1].at("hypothesis"),
              "rmsnorm_vec_regs[VEC=4,BLOCK=256]: round 1 of successive halving, 1 session");
  }

  const auto other = run("optimize --task rmsnorm --proposer cat --candidate " +
                         std::string(BLASTER_SOURCE_DIR) + "/kernels/rmsnorm");
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.err.find("--candidate goes with --proposer params"), std::string::npos)
      << other.err;
}

// The search proposes .cu sources, since a step is judged as a .cu file: a task's Triton candidate
// is left out of it in one line, and one named on its own is bad input that says what to use.
TEST_F(OptimizeCli, TheParamsProposerSearchesTheCudaCandidatesOnly) {
  write_file_atomically(dir_ / "request.txt", "{}\n");
  const auto r = run("proposer params --task softmax < " + (dir_ / "request.txt").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("kernels/softmax/softmax_triton.py left out: the params search proposes "
                       ".cu sources only"),
            std::string::npos)
      << r.err;
  const json reply = json::parse(r.out.substr(0, r.out.find('\n')));
  EXPECT_EQ(reply.at("hypothesis").get<std::string>().rfind("softmax_cluster[", 0), 0U) << r.out;

  const auto named =
      run("proposer params --task softmax --candidate kernels/softmax/softmax_triton.py < " +
          (dir_ / "request.txt").string());
  EXPECT_EQ(named.exit_code, 2) << named.err;
  EXPECT_NE(named.err.find("softmax_triton.py: the params search proposes .cu sources only"),
            std::string::npos)
      << named.err;
  EXPECT_NE(named.err.find("blaster tune --task softmax --candidate"), std::string::npos)
      << named.err;
}

// A trainer's candidates through `blaster serve` and `blaster eval`: a source that does not
// compile is judged without a GPU, so these run anywhere.
TEST_F(OptimizeCli, ServeAnswersEveryLineAndDropsARequestCutOffByTheClient) {
  const std::string broken = json{{"id", 1}, {"source", "/* blaster {} */ oops"}}.dump();
  write_file_atomically(dir_ / "requests.txt",
                        broken + "\nnot json\n{\"id\": 3, \"source\": \"/* bla");
  const auto r = run("serve --task rmsnorm --no-profile < " + (dir_ / "requests.txt").string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<json> answers;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) answers.push_back(json::parse(line));
  ASSERT_EQ(answers.size(), 2U) << r.out;
  EXPECT_EQ(answers[0].at("id"), 1);
  EXPECT_EQ(answers[0].at("status"), "compileerror");
  EXPECT_EQ(answers[1].at("reason"), "invalid_reply");
  EXPECT_NE(r.err.find("dropped unjudged"), std::string::npos) << r.err;
  const auto memory = run("memory --json");
  EXPECT_EQ(json::parse(memory.out).size(), 2U) << memory.out;

  // A client that closes its end before reading: blaster ends serving, it is not killed.
  const std::string shell = fmt::format(
      "( '{}' --home '{}' --root '{}' serve --task rmsnorm --no-profile; echo $? > '{}' ) < '{}' "
      "2> '{}' | true",
      BLASTER_BINARY, (dir_ / "home").string(), BLASTER_SOURCE_DIR,
      (dir_ / "status.txt").string(), (dir_ / "requests.txt").string(),
      (dir_ / "gone.txt").string());
  ASSERT_EQ(std::system(shell.c_str()), 0);
  EXPECT_EQ(read_file(dir_ / "status.txt"), "0\n") << read_file(dir_ / "gone.txt");
}

TEST_F(OptimizeCli, EvalJudgesOneFileAsAServedRequest) {
  write_file_atomically(dir_ / "broken.cu", "/* blaster {} */ oops");
  const auto r = run("eval --task rmsnorm --candidate " + (dir_ / "broken.cu").string() +
                     " --no-profile --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const json answer = json::parse(r.out);
  EXPECT_EQ(answer.at("status"), "compileerror");
  EXPECT_EQ(answer.at("reward"), 0.0);
  EXPECT_EQ(answer.at("step"), 1);
  const auto exported = run("trajectories export --run latest --out " + (dir_ / "t").string());
  EXPECT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_EQ(run("verify " + (dir_ / "t").string()).exit_code, 0);

  // The session's reward protocol is the flag's, recorded with the session.
  const auto five = run("eval --task rmsnorm --candidate " + (dir_ / "broken.cu").string() +
                        " --no-profile --reward-sessions 5 --json");
  EXPECT_EQ(five.exit_code, 0) << five.err;
  const auto out = dir_ / "t5";
  ASSERT_EQ(run("trajectories export --run latest --out " + out.string()).exit_code, 0);
  const json row = json::parse(read_file(out / "trajectories.jsonl"));
  const json session = json::parse(read_file(
      out / "sessions" / std::to_string(row.at("blaster_run_id").get<int>()) / "session.json"));
  EXPECT_EQ(session.at("reward_sessions"), 5);

  const auto missing = run("eval --task rmsnorm --candidate " + (dir_ / "nope.cu").string());
  EXPECT_EQ(missing.exit_code, 2);

  // A Triton file is not compiled as CUDA: bench judges it by its own frontend.
  write_file_atomically(dir_ / "rows.py", "\"\"\"blaster\n{}\n\"\"\"\nimport triton\n");
  const auto triton = run("eval --task rmsnorm --candidate " + (dir_ / "rows.py").string());
  EXPECT_EQ(triton.exit_code, 2) << triton.err;
  EXPECT_NE(triton.err.find("blaster bench --task rmsnorm --candidate"), std::string::npos)
      << triton.err;
}

TEST_F(OptimizeCli, AProposerThatCannotStartEndsWithItsReason) {
  const auto r = run("optimize --task rmsnorm --steps 2 --proposer 'exit 5'");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("exited with code 5"), std::string::npos) << r.err;
}

TEST_F(OptimizeCli, BadInputIsRefusedBeforeAnythingStarts) {
  const auto r = run("optimize --task no_such_task --proposer cat");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const auto missing = run("optimize --task rmsnorm");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("--proposer"), std::string::npos) << missing.err;
  // An empty value is refused as every flag's is; one of blanks by optimize itself.
  const auto nothing = run("optimize --task rmsnorm --proposer ''");
  EXPECT_EQ(nothing.exit_code, 2) << nothing.err;
  EXPECT_NE(nothing.err.find("--proposer: an empty value"), std::string::npos) << nothing.err;
  const auto blank = run("optimize --task rmsnorm --proposer '  '");
  EXPECT_EQ(blank.exit_code, 2) << blank.err;
  EXPECT_NE(blank.err.find("--proposer is empty"), std::string::npos) << blank.err;
  // The reward needs an interval, which one session cannot give.
  const auto one = run("optimize --task rmsnorm --proposer cat --reward-sessions 1");
  EXPECT_EQ(one.exit_code, 2) << one.err;
  EXPECT_NE(one.err.find("--reward-sessions"), std::string::npos) << one.err;
  const auto own = run("optimize --task rmsnorm --proposer cat --proposer-env BLASTER_HOME");
  EXPECT_EQ(own.exit_code, 2) << own.err;
  EXPECT_NE(own.err.find("blaster's own variables never reach the proposer"), std::string::npos)
      << own.err;
}

TEST_F(OptimizeCli, ExitsOneAndThreePrintAnErrorObjectWithJson) {
  const auto died = run("optimize --task rmsnorm --steps 2 --proposer 'exit 5' --json");
  EXPECT_EQ(died.exit_code, 1) << died.err;
  const json session = json::parse(died.out);
  EXPECT_EQ(session.at("error").at("code"), "proposer_exited");
  EXPECT_NE(session.at("error").at("message").get<std::string>().find("exited with code 5"),
            std::string::npos);
  EXPECT_EQ(session.at("ended"), "proposer_exited");

  const bool gpu = cuda::driver_unavailable_reason().empty();
  const auto eval = run("eval --task rmsnorm --no-profile --json --candidate " +
                        std::string(BLASTER_SOURCE_DIR) + "/tasks/rmsnorm/init.cu");
  EXPECT_EQ(eval.exit_code, gpu ? 0 : 3) << eval.err;
  const json answer = json::parse(eval.out);
  EXPECT_EQ(answer.contains("error"), !gpu) << eval.out;
  if (!gpu) {
    EXPECT_EQ(answer.at("error").at("code"), "no_gpu");
  }

  const std::string baseline =
      read_file(std::filesystem::path(BLASTER_SOURCE_DIR) / "tasks" / "rmsnorm" / "init.cu");
  const auto optimized =
      run("optimize --task rmsnorm --steps 1 --no-profile --json --proposer '" +
          proposer({json{{"source", baseline}}.dump()}) + "'");
  EXPECT_EQ(optimized.exit_code, gpu ? 0 : 3) << optimized.err;
  EXPECT_EQ(json::parse(optimized.out).contains("error"), !gpu);
  if (!gpu) {
    EXPECT_EQ(json::parse(optimized.out).at("error").at("code"), "no_gpu");
  }
}

// As bench refuses them: a device, a FIFO (which would block the read forever), a file larger
// than a candidate may be, and bytes that are not text.
TEST_F(OptimizeCli, EvalRefusesWhatIsNotACandidateFile) {
  ASSERT_EQ(::mkfifo((dir_ / "fifo.cu").c_str(), 0600), 0);
  write_file_atomically(dir_ / "big.cu", std::string(300 * 1024, 'x'));
  write_file_atomically(dir_ / "latin1.cu", "/* blaster {} */ // caf\xE9\n");
  for (const std::string& file : {std::string("/dev/zero"), (dir_ / "fifo.cu").string(),
                                 (dir_ / "big.cu").string(), (dir_ / "latin1.cu").string()}) {
    const auto r = run("eval --task rmsnorm --no-profile --json --candidate " + file);
    EXPECT_EQ(r.exit_code, 2) << file << ": " << r.err;
    EXPECT_EQ(json::parse(r.out).at("error").at("code"), "bad_input") << file;
  }
  EXPECT_EQ(run("memory --json").out, "[]\n") << "nothing was recorded";
}

// What a proposer wrote is shown, never obeyed: a hypothesis's escapes print as text.
TEST_F(OptimizeCli, MemoryPrintsAHypothesisControlCharactersAsText) {
  write_file_atomically(
      dir_ / "requests.txt",
      json{{"source", "/* blaster {} */ oops"}, {"hypothesis", "\x1b[31mred\x1b]0;title\x07"}}
              .dump() +
          "\n");
  ASSERT_EQ(run("serve --task rmsnorm --no-profile < " + (dir_ / "requests.txt").string())
                .exit_code,
            0);
  const auto table = run("memory");
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_EQ(table.out.find('\x1b'), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find('\x07'), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("\\x1b[31mred\\x1b]0;title\\x07"), std::string::npos) << table.out;
  // The JSON keeps it exactly.
  EXPECT_EQ(json::parse(run("memory --json").out).at(0).at("hypothesis"),
            "\x1b[31mred\x1b]0;title\x07");
}

// The hostile proposer, through the real binary: it finds the home, tries to forge the
// memory and drop files into the home and the checkout, reads blaster's variables and leaves a
// setsid child. Nothing changes, nothing stays, and the session's record says what the box
// did. Its requests name no path of the home, and each compile error's line is the candidate's.
TEST_F(OptimizeCli, AHostileProposerChangesNothingAndLeavesNothing) {
  if (!file_confinement_available()) GTEST_SKIP() << "this kernel has no Landlock";
  const auto home = dir_ / "home";
  const std::string baseline =
      read_file(std::filesystem::path(BLASTER_SOURCE_DIR) / "tasks" / "rmsnorm" / "init.cu");
  std::string broken = baseline;
  broken.replace(broken.find("__global__"), 10, "__global__ undefined_type");
  const int broken_line =
      1 + static_cast<int>(std::count(broken.begin(),
                                      broken.begin() + static_cast<std::ptrdiff_t>(
                                                           broken.find("undefined_type")),
                                      '\n'));
  std::string renamed = baseline;
  renamed.replace(renamed.find("\"rmsnorm_naive\""), 15, "\"rmsnorm_renamed\"");
  write_file_atomically(dir_ / "replies.txt",
                        json{{"source", broken}, {"hypothesis", "a typo"}}.dump() + "\n" +
                            json{{"source", renamed}, {"hypothesis", "renamed"}}.dump() + "\n");
  write_file_atomically(
      dir_ / "hostile.sh",
      "home=\"$1\"; marker=\"$2\"; exec 3< \"$3\"\n"
      "setsid sleep 300 & echo \"pids $$ $!\" >&2\n"
      "echo \"blaster variables: $(env | grep -c '^BLASTER_')\" >&2\n"
      "while IFS= read -r request; do\n"
      "  printf 'REQUEST %s\\n' \"$request\" >&2\n"
      "  sqlite3 \"$home/blaster.db\" \"UPDATE optimize_steps SET reward = 42, status = 'ok'\" "
      "2>/dev/null\n"
      "  printf x >> \"$home/blaster.db\" 2>/dev/null\n"
      "  touch \"$home/forged\" \"$marker\" 2>/dev/null\n"
      "  IFS= read -r reply <&3 || exit 0\n"
      "  printf '%s\\n' \"$reply\"\n"
      "done\n");
  marker_ = std::filesystem::path(BLASTER_SOURCE_DIR) /
            ("forged-by-a-proposer-" + std::to_string(::getpid()));
  ::setenv("BLASTER_HOME", home.c_str(), 1);
  const auto r = run(fmt::format(
      "optimize --task rmsnorm --steps 2 --no-profile --json --proposer 'sh {} {} {} {}'",
      (dir_ / "hostile.sh").string(), home.string(), marker_.string(),
      (dir_ / "replies.txt").string()));
  ::unsetenv("BLASTER_HOME");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json session = json::parse(r.out);
  const json& box = session.at("box");
  EXPECT_EQ(box.at("confinement").at("confined"), true) << box.dump();
  EXPECT_GE(box.at("ended").at("moved_out").get<int>(), 1) << box.dump();
  EXPECT_EQ(box.at("ended").at("left_running"), 0);
  EXPECT_NE(r.err.find("moved 1 process out of its process group"), std::string::npos) << r.err;

  EXPECT_FALSE(std::filesystem::exists(home / "forged"));
  EXPECT_FALSE(std::filesystem::exists(marker_));
  const json memory = json::parse(run("memory --json").out);
  ASSERT_EQ(memory.size(), 2U) << memory.dump();
  for (const auto& step : memory) {
    EXPECT_EQ(step.at("status"), "compileerror");
    EXPECT_EQ(step.at("reward"), 0.0);
  }

  const std::string log = read_file(home / "optimize" / "run-1" / "proposer.log");
  EXPECT_NE(log.find("blaster variables: 0"), std::string::npos) << log;
  std::istringstream lines(log);
  std::vector<json> requests;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("pids ", 0) == 0) {
      std::istringstream pids(line.substr(5));
      for (pid_t pid = 0; pids >> pid;) {
        EXPECT_TRUE(::kill(pid, 0) == -1 && errno == ESRCH) << "left running: " << pid;
      }
    }
    if (line.rfind("REQUEST ", 0) == 0) {
      EXPECT_EQ(line.find(dir_.string()), std::string::npos) << line;
      requests.push_back(json::parse(line.substr(8)));
    }
  }
  ASSERT_EQ(requests.size(), 2U) << log;
  const json& typo = requests[1].at("attempts").at(0);
  EXPECT_EQ(typo.at("error_line"), broken_line) << typo.dump();
  EXPECT_EQ(typo.at("message").get<std::string>().rfind("candidate-", 0), 0U) << typo.dump();
  const auto second = session.at("steps").at(1);
  EXPECT_EQ(second.at("error_line"), 4) << "the plan's kernel, not __nv_name_map(2): "
                                        << second.dump();
}

// blaster killed (kill -9, or SIGTERM or SIGINT with no cleanup of its own): the proposer and
// what it started, setsid child included, are killed by its keeper.
TEST_F(OptimizeCli, BlasterKilledLeavesNoProposerBehind) {
  for (const int signal : {SIGKILL, SIGTERM, SIGINT}) {
    const auto home = dir_ / fmt::format("home-{}", signal);
    const pid_t blaster = ::fork();
    if (blaster == 0) {
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, STDOUT_FILENO);
      ::dup2(null, STDERR_FILENO);
      // A test run in the background of a shell (`tests &`) inherits SIGINT ignored, and exec
      // keeps that: blaster would outlive the signal this test sends it.
      ::signal(SIGINT, SIG_DFL);
      ::signal(SIGTERM, SIG_DFL);
      ::execl(BLASTER_BINARY, BLASTER_BINARY, "--root", BLASTER_SOURCE_DIR, "--home",
              home.c_str(), "optimize", "--task", "rmsnorm", "--reply-timeout", "600",
              "--proposer", "setsid sleep 300 & s=$!; sleep 300 & echo \"pids $$ $s $!\" >&2; sleep 300",
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    const auto log = home / "optimize" / "run-1" / "proposer.log";
    std::string line;
    for (int i = 0; i < 600 && line.rfind("pids ", 0) != 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      std::ifstream in(log);
      std::getline(in, line);
    }
    ASSERT_EQ(line.rfind("pids ", 0), 0U) << "no proposer started";
    // The leader, its setsid child and a child in its group.
    std::vector<pid_t> pids;
    std::istringstream words(line.substr(5));
    for (pid_t pid = 0; words >> pid;) pids.push_back(pid);
    ::kill(blaster, signal);
    int status = 0;
    ::waitpid(blaster, &status, 0);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == signal)
        << "signal " << signal << ": blaster ended with status " << status;
    // The keeper reaps what it kills: a pid that is still there, running or a zombie left to
    // init, is one the keeper did not see end.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (const pid_t pid : pids) {
      while (::kill(pid, 0) == 0 && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      std::string stat;
      std::getline(std::ifstream(fmt::format("/proc/{}/stat", pid)), stat);
      EXPECT_TRUE(::kill(pid, 0) == -1 && errno == ESRCH)
          << "signal " << signal << ": " << pid << " left behind: " << stat;
    }
  }
}

}  // namespace
}  // namespace blaster
