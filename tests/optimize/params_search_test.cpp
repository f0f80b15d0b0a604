// The built-in params proposer: pinning a configuration into a source, the arms of a file, the
// rounds of successive halving on recorded outcomes, and the protocol it speaks.
#include "optimize/params_search.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/launch_plan.hpp"

namespace blaster {
namespace {

using json = nlohmann::json;

const std::filesystem::path source_dir = BLASTER_SOURCE_DIR;

constexpr const char* two_params = R"(/* blaster
{
  "launch": [{"kernel": "k<VEC, MODE>", "grid": "B", "block": "BLOCK", "args": ["out", "x"]}],
  "params": {"VEC": [4, 2], "BLOCK": [128, 256], "MODE": ["fast", "safe"]}
}
*/
template <int V, int M> __global__ void k(float* out, const float* x) {}
)";

TEST(ParamsSearch, PinningLeavesOneValuePerParamAndTheRestOfTheFile) {
  const std::string pinned =
      pin_params(two_params, "k.cu", {{"VEC", "2"}, {"BLOCK", "128"}, {"MODE", "safe"}});
  const launch_plan plan = parse_launch_plan(pinned, "k.cu");
  ASSERT_EQ(plan.params.size(), 3U);
  EXPECT_EQ(plan.params[0].first, "VEC");  // declaration order kept
  EXPECT_EQ(plan.params[0].second, std::vector<std::string>{"2"});
  EXPECT_EQ(plan.params[1].second, std::vector<std::string>{"128"});
  EXPECT_EQ(plan.params[2].second, std::vector<std::string>{"safe"});
  EXPECT_EQ(expand_params(plan).size(), 1U);
  EXPECT_NE(pinned.find("template <int V, int M> __global__ void k"), std::string::npos);
}

TEST(ParamsSearch, PinningAParamOrValueThePlanLacksNamesTheFile) {
  try {
    (void)pin_params(two_params, "k.cu", {{"VEC", "8"}});
    FAIL() << "a value the plan does not list was pinned";
  } catch (const input_error& e) {
    EXPECT_NE(std::string(e.what()).find("k.cu: param \"VEC\" has no value 8"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW((void)pin_params(two_params, "k.cu", {{"UNROLL", "2"}}), input_error);
  EXPECT_THROW((void)pin_params("__global__ void k() {}", "bare.cu", {}), input_error);
}

TEST(ParamsSearch, ArmsAreEveryConfigurationLabelledAsBenchLabelsThem) {
  const auto arms = arms_of({source_dir / "kernels" / "rmsnorm" / "rmsnorm_vec_regs.cu"});
  ASSERT_EQ(arms.size(), 4U);
  EXPECT_EQ(arms[0].label, "rmsnorm_vec_regs[VEC=4,BLOCK=128]");
  EXPECT_EQ(arms[3].label, "rmsnorm_vec_regs[VEC=2,BLOCK=256]");
  for (const auto& a : arms) {
    EXPECT_EQ(expand_params(parse_launch_plan(a.source, "pinned.cu")).front(), a.params);
  }
}

std::vector<params_arm> arms_named(const std::vector<std::string>& labels) {
  std::vector<params_arm> arms;
  for (const auto& l : labels)
    arms.push_back({.label = l,
                    .params = {},
                    .source = "/* " + l,
                    .time_us = {},
                    .speedup = {},
                    .rejected = {}});
  return arms;
}

// A passing step against a baseline of 100 us.
json ok(double time_us) {
  return {{"status", "ok"}, {"reason", ""}, {"time_us", time_us}, {"speedup", 100.0 / time_us}};
}

// The search's replies, each answered from `times` by the arm's label (a missing label is a
// rejection), until it stops; returns the stop's reason.
std::string run(params_search& s, const std::map<std::string, double>& times,
                std::vector<json>& replies) {
  for (int guard = 0; guard < 100; ++guard) {
    const json r = s.next();
    replies.push_back(r);
    if (r.contains("stop")) return r.at("why").get<std::string>();
    const std::string label = r.at("source").get<std::string>().substr(3);
    const auto t = times.find(label);
    s.observe(t == times.end() ? json{{"status", "wrongresult"}, {"reason", "wrong_result"}}
                               : ok(t->second));
  }
  ADD_FAILURE() << "the search never stopped";
  return {};
}

TEST(ParamsSearch, EachRoundKeepsTheFasterHalfWithTwiceTheSessions) {
  params_search s(arms_named({"a", "b", "c", "d", "e"}), /*final_sessions=*/3);
  std::vector<json> replies;
  const std::string why =
      run(s, {{"a", 50.0}, {"b", 10.0}, {"c", 30.0}, {"d", 20.0}}, replies);  // e is rejected
  // Round 1: all five, one session; round 2: b and d with two; b is left, confirmed with the
  // run's three.
  std::vector<std::pair<std::string, int>> asked;
  for (const auto& r : replies) {
    if (r.contains("source")) {
      asked.emplace_back(r.at("source").get<std::string>().substr(3), r.at("sessions").get<int>());
    }
  }
  const std::vector<std::pair<std::string, int>> expected = {
      {"a", 1}, {"b", 1}, {"c", 1}, {"d", 1}, {"e", 1}, {"b", 2}, {"d", 2}, {"b", 3}};
  EXPECT_EQ(asked, expected);
  EXPECT_NE(why.find("the fastest is b at 10.00 us, 10.00x the baseline"), std::string::npos)
      << why;
  EXPECT_EQ(s.arms()[4].rejected, "wrong_result");
  EXPECT_EQ(replies[5].at("tags"), json({"params", "round-2"}));
  EXPECT_EQ(replies[7].at("tags"), json({"params", "confirm"}));
}

// Each step has a run of its own: a baseline that ran slow makes a time look better than it is,
// and the speedup within the run does not.
TEST(ParamsSearch, RoundsRankBySpeedupWithinEachRunNotByTime) {
  params_search s(arms_named({"a", "b"}), 1);
  ASSERT_TRUE(s.next().contains("source"));
  s.observe({{"status", "ok"}, {"time_us", 9.0}, {"speedup", 2.0}});  // a drifted-fast run
  ASSERT_TRUE(s.next().contains("source"));
  s.observe({{"status", "ok"}, {"time_us", 10.0}, {"speedup", 2.5}});
  const json stop = s.next();
  EXPECT_NE(stop.at("why").get<std::string>().find("the fastest is b"), std::string::npos) << stop;
}

TEST(ParamsSearch, TheLastOneLeftIsConfirmedWithTheRunsSessions) {
  params_search s(arms_named({"a", "b"}), /*final_sessions=*/5);
  std::vector<json> replies;
  const std::string why = run(s, {{"a", 2.0}, {"b", 1.0}}, replies);
  ASSERT_EQ(replies.size(), 4U);  // a, b; b confirmed with 5 sessions; stop
  EXPECT_EQ(replies[2].at("sessions"), 5);
  EXPECT_EQ(replies[2].at("tags"), json({"params", "confirm"}));
  EXPECT_NE(why.find("the fastest is b"), std::string::npos) << why;
}

TEST(ParamsSearch, NothingThatPassesStopsWithTheReason) {
  params_search all(arms_named({"a", "b"}), 3);
  std::vector<json> replies;
  EXPECT_EQ(run(all, {}, replies), "every one of the 2 configurations was rejected");

  // The winner rejected at its confirmation (a flaky kernel): the stop says which and why.
  params_search flaky(arms_named({"a"}), 3);
  ASSERT_TRUE(flaky.next().contains("source"));
  flaky.observe(ok(1.0));
  ASSERT_EQ(flaky.next().at("sessions"), 3);
  flaky.observe({{"status", "wrongresult"}, {"reason", "nondeterministic"}});
  EXPECT_EQ(flaky.next().at("why"),
            "the last configuration left, a, was rejected when timed again (nondeterministic)");
}

TEST(ParamsSearch, SpeaksTheProtocolReadingEachStepsFeedbackFromTheNextRequest) {
  params_search s(arms_named({"a", "b"}), 2);
  std::stringstream in;
  in << json{{"step", 1}, {"attempts", json::array()}}.dump() << '\n'
     << json{{"step", 2}, {"attempts", {{{"step", 1}, {"status", "ok"}, {"time_us", 9.0}}}}}.dump()
     << '\n'
     << json{{"step", 3},
             {"attempts",
              {{{"step", 1}, {"status", "ok"}, {"time_us", 9.0}},
               {{"step", 2}, {"status", "ok"}, {"time_us", 4.0}}}}}
            .dump()
     << '\n'
     << json{{"step", 4}, {"attempts", {{{"step", 3}, {"status", "ok"}, {"time_us", 4.1}}}}}.dump()
     << '\n'
     << json{{"step", 5}, {"attempts", json::array()}}.dump() << '\n';
  std::stringstream out;
  serve_params_proposer(in, out, s);
  std::vector<json> replies;
  for (std::string line; std::getline(out, line);) replies.push_back(json::parse(line));
  ASSERT_EQ(replies.size(), 4U) << out.str();  // a, b, b with 2 sessions, stop
  EXPECT_EQ(replies[2].at("source"), "/* b");
  EXPECT_EQ(replies[2].at("sessions"), 2);
  EXPECT_TRUE(replies[3].at("stop").get<bool>());
  EXPECT_NE(replies[3].at("why").get<std::string>().find("b at 4.10 us"), std::string::npos);

  std::stringstream garbage("not json\n");
  params_search t(arms_named({"a"}), 1);
  EXPECT_THROW(serve_params_proposer(garbage, out, t), input_error);
}

// A resumed session's first request carries every step so far: the search goes on from them,
// proposing no configuration already judged in its round (one never judged, with no GPU, is
// proposed again), and across a round's end as the steps had taken it.
TEST(ParamsSearch, AResumedSessionsStepsAreNotProposedAgain) {
  const auto step = [](int n, const std::string& label, const std::string& stage, json outcome) {
    outcome["step"] = n;
    outcome["hypothesis"] = label + ": " + stage + ", 1 session";
    return outcome;
  };
  const std::string round1 = "round 1 of successive halving";
  params_search s(arms_named({"a", "b", "c", "d"}), 3);
  std::stringstream in;
  in << json{{"step", 4},
             {"attempts",
              {step(1, "a", round1, ok(50.0)),
               step(2, "b", round1, {{"status", "wrongresult"}, {"reason", "wrong_result"}}),
               step(3, "c", round1, {{"status", "unjudged"}, {"reason", ""}})}}}
            .dump()
     << '\n'
     << json{{"step", 5}, {"attempts", {step(4, "c", round1, ok(20.0))}}}.dump() << '\n';
  std::stringstream out;
  serve_params_proposer(in, out, s);
  std::vector<json> replies;
  for (std::string line; std::getline(out, line);) replies.push_back(json::parse(line));
  ASSERT_EQ(replies.size(), 2U) << out.str();
  EXPECT_EQ(replies[0].at("source"), "/* c") << "a and b were judged before the resume";
  EXPECT_EQ(replies[1].at("source"), "/* d");
  EXPECT_EQ(s.arms()[1].rejected, "wrong_result");

  // Every configuration of round 1 judged before: the first reply is round 2's.
  params_search t(arms_named({"a", "b", "c"}), 3);
  std::stringstream resumed;
  resumed << json{{"step", 4},
                  {"attempts",
                   {step(1, "a", round1, ok(50.0)), step(2, "b", round1, ok(10.0)),
                    step(3, "c", round1, ok(30.0))}}}
                 .dump()
          << '\n';
  std::stringstream answer;
  serve_params_proposer(resumed, answer, t);
  const json first = json::parse(answer.str().substr(0, answer.str().find('\n')));
  EXPECT_EQ(first.at("source"), "/* b") << answer.str();
  EXPECT_EQ(first.at("sessions"), 2);
  EXPECT_EQ(first.at("tags"), json({"params", "round-2"}));
}

}  // namespace
}  // namespace blaster
