// blaster serve's loop with the stand-in judge (no GPU): each request answered with its verdict
// and id, malformed requests answered and recorded, and every way a client can leave.
#include "optimize/serve_loop.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "evidence/bundle_verifier.hpp"
#include "evidence/run_catalog.hpp"
#include "evidence/store.hpp"
#include "optimize/http_front.hpp"
#include "optimize/judging_session.hpp"
#include "optimize/optimization_memory.hpp"
#include "optimize/stand_in_judge.hpp"
#include "optimize/temp_home.hpp"
#include "optimize/trajectory.hpp"

namespace blaster {
namespace {

using json = nlohmann::json;

task_brief brief() {
  return task_brief{.name = "rmsnorm",
                    .title = "RMSNorm over dim 1",
                    .contract = {{"name", "rmsnorm"}},
                    .baseline_source = "/* blaster baseline */",
                    .timed_case = "canonical",
                    .shape = "B=16 C=64",
                    .dtype = "f16"};
}

std::string with_id(const std::string& request, const json& id) {
  json j = json::parse(request);
  j["id"] = id;
  return j.dump();
}

std::vector<json> answers_in(const std::string& out) {
  std::vector<json> answers;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) answers.push_back(json::parse(line));
  return answers;
}

// A client that stopped reading: every write fails.
class closed_buffer final : public std::streambuf {
 protected:
  int_type overflow(int_type) override { return traits_type::eof(); }
  std::streamsize xsputn(const char*, std::streamsize) override { return 0; }
};

class ServeLoop : public ::testing::Test {
 protected:
  testing::temp_home home_{"serve"};
  store records_{home_.path() / "home"};
  stand_in_judge judge_;

  serve_outcome serve(const std::string& input, std::ostream& out, std::int64_t* run = nullptr) {
    judging_session session(records_, judge_, "blaster serve --task rmsnorm", brief(),
                            home_.path() / "serve");
    std::istringstream in(input);
    const serve_outcome o = serve_requests(in, out, session, {});
    session.finish(o.ended, o.why, "serve");
    if (run != nullptr) *run = session.run_id();
    return o;
  }
};

TEST_F(ServeLoop, EachRequestIsAnsweredWithItsVerdictAndIdAndRecorded) {
  std::ostringstream out;
  std::int64_t run = 0;
  const serve_outcome o =
      serve(with_id(candidate("FAST 2.0", "one pass", {"one-pass"}), 7) + "\n{ not json\n\n" +
                with_id(candidate("WRONG", "skip the mean"), "b") + "\n" +
                R"({"id": 9, "source": "k", "sessions": 0})" + "\n",
            out, &run);
  EXPECT_EQ(o.ended, "input_closed");
  EXPECT_EQ(o.judged, 4);  // the blank line is no request
  const auto answers = answers_in(out.str());
  ASSERT_EQ(answers.size(), 4U) << out.str();
  EXPECT_EQ(answers[0].at("id"), 7);
  EXPECT_EQ(answers[0].at("status"), "ok");
  EXPECT_DOUBLE_EQ(answers[0].at("reward").get<double>(), 2.0 * 0.98);
  EXPECT_EQ(answers[0].at("speedup_interval"), json({1.96, 2.04}));
  EXPECT_EQ(answers[0].at("diagnosis"), "bandwidth-bound (DRAM at 70% of peak)");
  EXPECT_TRUE(answers[0].at("kept").get<bool>());
  EXPECT_EQ(answers[0].at("run_id"), run);
  EXPECT_EQ(answers[0].at("source_sha256").get<std::string>().size(), 64U);
  EXPECT_TRUE(records_.cas().contains(answers[0].at("request_sha256").get<std::string>()));
  EXPECT_EQ(answers[1].at("id"), nullptr);
  EXPECT_EQ(answers[1].at("reason"), "invalid_reply");
  EXPECT_EQ(answers[2].at("id"), "b");
  EXPECT_EQ(answers[2].at("status"), "wrongresult");
  EXPECT_EQ(answers[2].at("reward"), 0.0);
  EXPECT_NE(answers[3].at("message").get<std::string>().find("\"sessions\" must be"),
            std::string::npos);
  EXPECT_EQ(judge_.evaluations, 2);

  const auto steps = optimization_memory(records_).steps_of(run);
  ASSERT_EQ(steps.size(), 4U);
  EXPECT_EQ(steps[0].tags, std::vector<std::string>{"one-pass"});
  EXPECT_EQ(run_catalog(records_).find_run(run)->status, "completed");
  // A serving run exports as a trajectory like an optimize session.
  const auto bundle = home_.path() / "bundle";
  static_cast<void>(export_trajectories(records_, {run}, bundle, nullptr));
  EXPECT_TRUE(verify_bundle(bundle, nullptr).ok());
}

// A served session exports as the lines that crossed: each client line and the answer written
// back to it, byte for byte, each cited by its step; verify renders them again.
TEST_F(ServeLoop, TheExportedMessagesAreTheLinesTheClientSentAndGot) {
  std::ostringstream out;
  std::int64_t run = 0;
  const std::vector<std::string> sent = {with_id(candidate("FAST 2.0", "one pass"), 1),
                                         "{ not json", with_id(candidate("WRONG", "skip"), 3)};
  serve(sent[0] + "\n" + sent[1] + "\n" + sent[2] + "\n", out, &run);
  std::vector<std::string> got;
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);) got.push_back(line);
  ASSERT_EQ(got.size(), 3U);

  const json t = trajectory_of(records_, run);
  const json& messages = t.at("messages");
  // system, the task (nothing was sent before the first request), then each exchange.
  ASSERT_EQ(messages.size(), 2U + 2U * 3U);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(messages[2 + 2 * i].at("role"), "assistant");
    EXPECT_EQ(messages[2 + 2 * i].at("content").get<std::string>(), sent[i]) << i;
    EXPECT_EQ(messages[3 + 2 * i].at("role"), "user");
    EXPECT_EQ(messages[3 + 2 * i].at("content").get<std::string>(), got[i]) << i;
  }
  EXPECT_EQ(messages[4].value("blaster_not_a_candidate", false), true);
  const auto steps = optimization_memory(records_).steps_of(run);
  ASSERT_EQ(steps.size(), 3U);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(records_.cas().get(steps[i].answer_sha256), got[i]) << i;
  }
}

TEST_F(ServeLoop, ARequestCutOffByTheEndOfInputIsDroppedUnjudged) {
  std::ostringstream out;
  const std::string whole = candidate("FAST 1.5", "first");
  const std::string cut = candidate("FAST 3.0", "second").substr(0, 25);
  const serve_outcome o = serve(whole + "\n" + cut, out);
  EXPECT_EQ(o.ended, "client_left");
  EXPECT_NE(o.why.find("25 bytes"), std::string::npos) << o.why;
  EXPECT_EQ(o.judged, 1);
  EXPECT_EQ(judge_.evaluations, 1);
  EXPECT_EQ(answers_in(out.str()).size(), 1U);
}

TEST_F(ServeLoop, AClientThatStopsReadingEndsServingAndItsStepIsKept) {
  closed_buffer closed;
  std::ostream out(&closed);
  std::int64_t run = 0;
  const serve_outcome o =
      serve(candidate("FAST 1.5", "first") + "\n" + candidate("FAST 3.0", "never judged") + "\n",
            out, &run);
  EXPECT_EQ(o.ended, "client_gone");
  EXPECT_EQ(judge_.evaluations, 1);
  EXPECT_EQ(optimization_memory(records_).steps_of(run).size(), 1U);
}

TEST_F(ServeLoop, StopAndAMissingGpuEndServing) {
  std::ostringstream out;
  const serve_outcome stopped =
      serve(candidate("FAST 1.5", "first") + "\n{\"stop\": true, \"why\": \"done\"}\n" +
                candidate("FAST 2.0", "after the stop") + "\n",
            out);
  EXPECT_EQ(stopped.ended, "stopped");
  EXPECT_EQ(stopped.why, "the client asked to stop: done");
  EXPECT_EQ(judge_.evaluations, 1);

  std::ostringstream none;
  const serve_outcome no_gpu =
      serve(candidate("NO_GPU", "x") + "\n" + candidate("FAST 2.0", "y") + "\n", none);
  EXPECT_EQ(no_gpu.ended, "no_gpu");
  const auto answers = answers_in(none.str());
  ASSERT_EQ(answers.size(), 1U);
  EXPECT_EQ(answers[0].at("status"), "unjudged");
  EXPECT_EQ(answers[0].at("message"), "no CUDA driver on this machine");
}

// A line over the cap a body over HTTP has is refused the same way: answered with the reason,
// never judged nor held whole, and serving goes on with the next line.
TEST_F(ServeLoop, ALineOverTheRequestCapIsRefusedAndServingGoesOn) {
  std::ostringstream out;
  std::int64_t run = 0;
  const std::string huge = R"({"id": 1, "source": ")" + std::string(3 * 1024 * 1024, 'x') + "\"}";
  const serve_outcome o =
      serve(huge + "\n" + with_id(candidate("FAST 1.5", "after"), 2) + "\n", out, &run);
  EXPECT_EQ(o.ended, "input_closed");
  EXPECT_EQ(o.judged, 1);
  EXPECT_EQ(o.refused, 1);
  const auto answers = answers_in(out.str());
  ASSERT_EQ(answers.size(), 2U);
  EXPECT_EQ(answers[0].at("id"), nullptr);
  EXPECT_EQ(answers[0].at("error"), too_large_request(huge.size(), max_request_bytes));
  EXPECT_EQ(answers[1].at("id"), 2);
  EXPECT_EQ(answers[1].at("status"), "ok");
  EXPECT_EQ(optimization_memory(records_).steps_of(run).size(), 1U);
  EXPECT_EQ(max_request_bytes, http_limits{}.max_body_bytes) << "the same cap both ways";
}

}  // namespace
}  // namespace blaster
