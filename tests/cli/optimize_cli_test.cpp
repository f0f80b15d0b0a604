// blaster optimize, memory and trajectories export as a user runs them, with a scripted proposer
// on rmsnorm: a reply that is not JSON, a source that does not compile, then the baseline's own
// source. With a GPU the last is judged; without one the session ends there with exit 3. Either
// way every step is in the memory and the session exports as a bundle that verify accepts.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/run_blaster.hpp"
#include "core/cuda_driver.hpp"
#include "core/file_io.hpp"

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
  void TearDown() override { std::filesystem::remove_all(dir_); }
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

  // A bench run is not a session.
  const auto wrong = run("trajectories export --run 2 --out " + (dir_ / "other").string());
  EXPECT_EQ(wrong.exit_code, 2) << wrong.err;
  EXPECT_NE(wrong.err.find("not an optimize, serve or eval session"), std::string::npos) << wrong.err;
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

  const auto missing = run("eval --task rmsnorm --candidate " + (dir_ / "nope.cu").string());
  EXPECT_EQ(missing.exit_code, 2);
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
}

}  // namespace
}  // namespace blaster
