// The proposer protocol's messages: what a reply may be, what is wrong with one that is not a
// candidate, what a request carries, and how blaster's reasons map to trajectory statuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "core/file_io.hpp"
#include "optimize/device_brief.hpp"
#include "optimize/optimization_memory.hpp"
#include "optimize/protocol.hpp"

namespace blaster {
namespace {

reply_problem problem_of(std::string_view line) {
  const parsed_reply r = parse_reply(line);
  const auto* p = std::get_if<reply_problem>(&r);
  EXPECT_NE(p, nullptr) << line;
  return p != nullptr ? *p : reply_problem{};
}

TEST(ProposerReply, ACandidateCarriesItsSourceHypothesisAndTags) {
  const parsed_reply r = parse_reply(
      R"({"source": "/* blaster {} */ __global__ void k() {}", "hypothesis": "one pass\nsecond line",
          "tags": ["vectorize", "one-pass"], "kind": "rewrite", "ignored": 1})");
  const auto* p = std::get_if<proposal>(&r);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->source, "/* blaster {} */ __global__ void k() {}");
  EXPECT_EQ(p->hypothesis, "one pass");  // one line
  EXPECT_EQ(p->tags, (std::vector<std::string>{"vectorize", "one-pass"}));
  EXPECT_EQ(p->kind, "rewrite");
  EXPECT_FALSE(p->sessions);  // the run's

  const parsed_reply screen = parse_reply(R"({"source": "k", "sessions": 1})");
  ASSERT_NE(std::get_if<proposal>(&screen), nullptr);
  EXPECT_EQ(std::get<proposal>(screen).sessions, 1);
}

TEST(ProposerReply, StopEndsTheSession) {
  const parsed_reply r = parse_reply(R"({"stop": true, "why": "nothing left to try"})");
  const auto* s = std::get_if<stop_request>(&r);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->why, "nothing left to try");
}

TEST(ProposerReply, WhatIsNotACandidateSaysWhy) {
  EXPECT_NE(problem_of("not json").detail.find("not JSON"), std::string::npos);
  EXPECT_NE(problem_of("[1, 2]").detail.find("not a JSON object"), std::string::npos);
  EXPECT_NE(problem_of(R"({"hypothesis": "x"})").detail.find("no \"source\""),
            std::string::npos);
  EXPECT_NE(problem_of(R"({"source": 42})").detail.find("must be a string"), std::string::npos);
  EXPECT_NE(problem_of(R"({"source": "  \n "})").detail.find("empty"), std::string::npos);
  EXPECT_NE(problem_of(R"({"source": "k", "tags": "a"})").detail.find("list of strings"),
            std::string::npos);
  EXPECT_NE(problem_of(R"({"source": "k", "tags": [1]})").detail.find("list of strings"),
            std::string::npos);
  EXPECT_NE(problem_of(R"({"source": "k", "hypothesis": 3})").detail.find("\"hypothesis\""),
            std::string::npos);
  EXPECT_NE(problem_of(R"({"source": "k", "stop": "yes"})").detail.find("\"stop\""),
            std::string::npos);
  EXPECT_NE(problem_of(R"({"source": "a\u0000b"})").detail.find("NUL"), std::string::npos);
  for (const char* sessions : {"0", "33", "2.5", "\"3\""}) {
    EXPECT_NE(problem_of(std::string(R"({"source": "k", "sessions": )") + sessions + "}")
                  .detail.find("\"sessions\" must be an integer from 1 to 32"),
              std::string::npos)
        << sessions;
  }
  EXPECT_EQ(problem_of("{").reason, "invalid_reply");
}

TEST(ProposerReply, LimitsAreEnforced) {
  const std::string big = R"({"source": ")" + std::string(300 * 1024, 'x') + R"("})";
  EXPECT_NE(problem_of(big).detail.find("more than the 262144"), std::string::npos);
}

// PROTOCOL.md says what is cut rather than refused: the hypothesis to one line of 500
// characters, the tags to the first 16 of 64 characters, never inside a character.
TEST(ProposerReply, LongFieldsAreCutNotRefused) {
  std::string tags = R"({"source": "k", "tags": [)";
  for (int i = 0; i < 17; ++i) tags += (i ? ",\"t" : "\"t") + std::to_string(i) + "\"";
  tags += "]}";
  const parsed_reply r = parse_reply(tags);
  ASSERT_NE(std::get_if<proposal>(&r), nullptr) << "17 tags are cut to 16, not refused";
  const auto& kept = std::get<proposal>(r).tags;
  ASSERT_EQ(kept.size(), 16U);
  EXPECT_EQ(kept.front(), "t0");
  EXPECT_EQ(kept.back(), "t15");

  // 600 three-byte characters: cut to 500 characters, whole ones.
  std::string wide;
  for (int i = 0; i < 600; ++i) wide += "\u00e9\u20ac";
  const nlohmann::json reply = {{"source", "k"}, {"hypothesis", wide}, {"tags", {wide}}};
  const parsed_reply cut = parse_reply(reply.dump());
  ASSERT_NE(std::get_if<proposal>(&cut), nullptr);
  const auto& p = std::get<proposal>(cut);
  EXPECT_EQ(p.hypothesis.size(), 250U * (2 + 3));
  EXPECT_EQ(p.tags.at(0).size(), 32U * (2 + 3));
  EXPECT_NO_THROW(static_cast<void>(nlohmann::json(p.hypothesis).dump()));
  EXPECT_NO_THROW(static_cast<void>(nlohmann::json(p.tags).dump()));
}

// JSON is UTF-8: a reply with another byte is refused with the byte named, and the reason
// holds no byte that a JSON form of the step could not carry.
TEST(ProposerReply, AByteThatIsNotUtf8IsNamedNotQuoted) {
  for (const std::string& line :
       {std::string("{\"source\": \"k\", \"hypothesis\": \"caf\xFF\"}"), std::string("\xFF"),
        std::string("{\"source\": \"\xC3\"}"), std::string("{\"source\": \"\xED\xA0\x80\"}")}) {
    const reply_problem p = problem_of(line);
    EXPECT_EQ(p.reason, "invalid_reply");
    EXPECT_NE(p.detail.find("not UTF-8 text: byte 0x"), std::string::npos) << p.detail;
    EXPECT_NO_THROW(static_cast<void>(nlohmann::json(p.detail).dump())) << p.detail;
  }
  // Escaped in the JSON, any character is fine.
  const parsed_reply escaped = parse_reply(R"({"source": "k", "hypothesis": "caf\u00e9 \u001b"})");
  ASSERT_NE(std::get_if<proposal>(&escaped), nullptr);
  EXPECT_EQ(std::get<proposal>(escaped).hypothesis, "caf\xC3\xA9 \x1b");
}

TEST(ProposerRequest, CarriesTheTaskTheBestTheAttemptsAndTheMemory) {
  task_brief task{.name = "rmsnorm", .title = "RMSNorm", .contract = {{"name", "rmsnorm"}},
                  .baseline_source = "/* baseline */", .timed_case = "canonical",
                  .shape = "B=16", .dtype = "f16"};
  attempt best;
  best.step = 2;
  best.status = "ok";
  best.time_us = 80.0;
  best.speedup = 1.5;
  best.speedup_low = 1.4;
  best.speedup_high = 1.6;
  best.reward = 1.4;
  best.diagnosis = "bandwidth-bound";
  attempt failed;
  failed.step = 3;
  failed.status = "compileerror";
  failed.reason = "compile_error";
  failed.log = "step-3.cu(12): error: identifier \"x\" is undefined";
  failed.error_line = 12;
  request_state state;
  state.step = 4;
  state.steps_left = 7;
  state.baseline_us = 120.0;
  state.best = &best;
  state.best_source = "/* best */";
  state.recent = {&best, &failed};
  state.memory = nlohmann::json::array({{{"task", "rmsnorm"}, {"step", 9}}});
  const nlohmann::json r = build_request(task, state);
  EXPECT_EQ(r.at("protocol"), "blaster-optimize/1");
  EXPECT_EQ(r.at("step"), 4);
  EXPECT_EQ(r.at("steps_left"), 7);
  EXPECT_TRUE(r.at("seconds_left").is_null());
  EXPECT_EQ(r.at("task").at("baseline_source"), "/* baseline */");
  EXPECT_EQ(r.at("task").at("contract").at("name"), "rmsnorm");
  EXPECT_FALSE(r.at("task").at("candidate_format").get<std::string>().empty());
  EXPECT_EQ(r.at("best").at("source"), "/* best */");
  EXPECT_EQ(r.at("best").at("speedup_interval"), nlohmann::json({1.4, 1.6}));
  EXPECT_EQ(r.at("best").at("diagnosis"), "bandwidth-bound");
  ASSERT_EQ(r.at("attempts").size(), 2U);
  EXPECT_EQ(r.at("attempts")[1].at("error_line"), 12);
  EXPECT_EQ(r.at("attempts")[1].at("compile_log"), failed.log);
  EXPECT_FALSE(r.at("attempts")[1].contains("time_us"));
  EXPECT_EQ(r.at("memory").size(), 1U);
  EXPECT_EQ(r.at("baseline_us"), 120.0);
}

TEST(TrajectoryStatus, ReasonsMapToTheFormatsThreeStatuses) {
  EXPECT_EQ(trajectory_status(""), "ok");
  for (const char* unbuilt : {"compile_error", "plan_error", "invalid_reply"}) {
    EXPECT_EQ(trajectory_status(unbuilt), "compileerror") << unbuilt;
  }
  for (const char* rejected :
       {"launch_error", "crash", "timeout", "wrong_result", "nonfinite", "unwritten_output",
        "out_of_bounds_write", "input_modified", "nondeterministic", "stale_in_timing",
        "impossible_speed", "sanitizer_error"}) {
    EXPECT_EQ(trajectory_status(rejected), "wrongresult") << rejected;
  }
}

TEST(CompileLog, TheFirstBlamedLineIsFound) {
  EXPECT_EQ(first_error_line("step-3.cu(12): error: identifier \"x\" is undefined", "step-3.cu"),
            12);
  EXPECT_EQ(first_error_line("a.cu(3): warning: unused\na.cu(40): error: expected a \";\"", "a.cu"),
            40);
  EXPECT_EQ(first_error_line("a.cu(7): catastrophic error: cannot open source file", "a.cu"), 7);
  EXPECT_EQ(first_error_line("a.cu(12, 4): error: x", "a.cu"), 12);
  EXPECT_EQ(first_error_line("no location here", "a.cu"), std::nullopt);
  // Another file's line is not the candidate's.
  EXPECT_EQ(first_error_line("common.cuh(9): error: x\na.cu(30): error: y", "a.cu"), 30);
}

// A kernel the plan names and the source lacks: NVRTC blames line 2 of its own __nv_name_map,
// which is not a line of the candidate. The line to fix is the plan's, which names the kernel.
TEST(CompileLog, AnUnknownKernelIsBlamedOnThePlanNotTheNameMap) {
  const std::string source =
      "/* blaster\n{\n  \"launch\": [{\"kernel\": \"renamed_kernel\", \"grid\": 1, \"block\": "
      "1, \"args\": []}]\n}\n*/\n__global__ void kernel() {}\n";
  const std::string log =
      "__nv_name_map(2): error: identifier \"renamed_kernel\" is undefined\n"
      "1 error detected in the compilation of \"candidate-1f.cu\".";
  EXPECT_EQ(first_error_line(log, "candidate-1f.cu", source), 3);
  EXPECT_EQ(first_error_line(log, "candidate-1f.cu"), std::nullopt) << "never line 2";
}

TEST(AttemptJson, RoundTrips) {
  attempt a;
  a.step = 5;
  a.parent = 2;
  a.hypothesis = "h";
  a.tags = {"t"};
  a.sessions = 1;
  a.status = "ok";
  a.variant = "k[VEC=4]";
  a.params = {{"VEC", "4"}};
  a.time_us = 12.5;
  a.speedup = 2.0;
  a.speedup_low = 1.9;
  a.speedup_high = 2.1;
  a.reward = 1.9;
  a.kept = true;
  a.bench_run_id = 7;
  a.source_sha256 = std::string(64, 'a');
  const attempt b = attempt_from_json(to_json(a));
  EXPECT_EQ(to_json(b), to_json(a));
  EXPECT_EQ(b.sessions, 1);
}

}  // namespace
}  // namespace blaster

namespace blaster {
namespace {

nlohmann::json schema(const char* name) {
  return nlohmann::json::parse(read_file(std::filesystem::path(BLASTER_SOURCE_DIR) / "optimize" /
                                         "schemas" / name));
}

// The request schema and the requests blaster builds say the same: every required field is
// there, and nothing is sent that the schema does not declare.
TEST(ProtocolSchema, RequestsMatchTheirSchema) {
  const nlohmann::json s = schema("request.schema.json");
  attempt best;
  best.step = 1;
  best.status = "ok";
  best.time_us = 10.0;
  best.speedup = 2.0;
  best.speedup_low = 1.9;
  best.speedup_high = 2.1;
  best.roofline_pct = 50.0;
  best.diagnosis = "d";
  best.log = "l";
  best.error_line = 1;
  request_state state;
  state.step = 2;
  state.best = &best;
  state.recent = {&best};
  const nlohmann::json r = build_request(task_brief{}, state);
  for (const auto& key : s.at("required")) EXPECT_TRUE(r.contains(key)) << key;
  for (const auto& [key, value] : r.items()) EXPECT_TRUE(s.at("properties").contains(key)) << key;
  const auto& task = s.at("properties").at("task");
  for (const auto& key : task.at("required")) EXPECT_TRUE(r.at("task").contains(key)) << key;
  for (const auto& [key, value] : r.at("task").items()) {
    EXPECT_TRUE(task.at("properties").contains(key)) << key;
  }
  const auto& feedback = s.at("$defs").at("feedback");
  for (const auto& key : feedback.at("required")) EXPECT_TRUE(r.at("best").contains(key)) << key;
  for (const auto& [key, value] : r.at("best").items()) {
    EXPECT_TRUE(feedback.at("properties").contains(key)) << key;
  }
  for (const auto& [key, value] : r.at("attempts")[0].items()) {
    EXPECT_TRUE(feedback.at("properties").contains(key)) << key;
  }
  // Every status a step can have: a serve answer and other sessions' steps carry unjudged too.
  const auto& statuses = feedback.at("properties").at("status").at("enum");
  for (const char* status : {"ok", "compileerror", "wrongresult", "unjudged"}) {
    EXPECT_NE(std::find(statuses.begin(), statuses.end(), status), statuses.end()) << status;
  }
}

// The device a request carries (with its model and ceilings) and a memory entry (with its
// card and bounds) are what the schema declares.
TEST(ProtocolSchema, TheDeviceAndTheMemoryEntriesMatchTheirSchema) {
  const nlohmann::json s = schema("request.schema.json");
  bench_report report;
  report.device = cuda::device_properties{};
  report.device->name = "NVIDIA H100 80GB HBM3";
  report.memory = memory_ceilings{};
  report.matrix = matrix_rate{};
  report.floors = launch_floors{};
  const nlohmann::json device = device_brief(report);
  EXPECT_EQ(device.at("model"), "H100");
  const auto& declared = s.at("$defs").at("device");
  for (const auto& key : declared.at("required")) EXPECT_TRUE(device.contains(key)) << key;
  for (const auto& [key, value] : device.items()) {
    EXPECT_TRUE(declared.at("properties").contains(key)) << key;
  }
  for (const auto& [key, value] : device.at("ceilings").items()) {
    EXPECT_TRUE(declared.at("properties").at("ceilings").at("properties").contains(key)) << key;
  }
  EXPECT_TRUE(device_brief(bench_report{}).is_null()) << "no GPU: no device";

  optimization_memory::entry e;
  e.step.gpu = "H100";
  e.step.bound = "bandwidth-bound";
  e.step.improved_bound = "latency-bound";
  const nlohmann::json entry = to_json(e);
  const auto& memory_entry = s.at("$defs").at("memory_entry");
  for (const auto& key : memory_entry.at("required")) EXPECT_TRUE(entry.contains(key)) << key;
  for (const auto& [key, value] : entry.items()) {
    EXPECT_TRUE(memory_entry.at("properties").contains(key)) << key;
  }
  request_state state;
  state.step = 3;
  state.in_flight = {{{"step", 2}, {"hypothesis", "h"}, {"tags", {"t"}}}};
  const nlohmann::json request = build_request(task_brief{}, state);
  EXPECT_TRUE(s.at("properties").contains("in_flight"));
  for (const auto& key : s.at("properties").at("in_flight").at("items").at("required")) {
    EXPECT_TRUE(request.at("in_flight")[0].contains(key)) << key;
  }
  EXPECT_FALSE(build_request(task_brief{}, request_state{}).contains("in_flight"))
      << "one GPU: the request is what it always was";
  attempt a;
  a.bound = "bandwidth-bound";
  const auto& bounds = s.at("$defs").at("feedback").at("properties").at("bound").at("enum");
  EXPECT_NE(std::find(bounds.begin(), bounds.end(), feedback_json(a).at("bound")), bounds.end());
}

// Every field a reply may carry is one the schema declares, and the limits agree.
TEST(ProtocolSchema, RepliesMatchTheirSchema) {
  const nlohmann::json s = schema("reply.schema.json");
  const auto& candidate = s.at("oneOf")[0];
  for (const char* key : {"source", "hypothesis", "kind", "tags"}) {
    EXPECT_TRUE(candidate.at("properties").contains(key)) << key;
  }
  const reply_limits limits;
  EXPECT_EQ(candidate.at("properties").at("source").at("maxLength"), limits.max_source_bytes);
  // Tags past the limits are cut, not refused: the schema says so instead of forbidding them.
  const auto& tags = candidate.at("properties").at("tags");
  EXPECT_FALSE(tags.contains("maxItems"));
  EXPECT_NE(tags.at("description").get<std::string>().find(
                fmt::format("the first {} are kept, each to its first line and {} characters",
                            limits.max_tags, limits.max_tag_chars)),
            std::string::npos);
  EXPECT_EQ(candidate.at("properties").at("sessions").at("maximum"), limits.max_sessions);
  EXPECT_EQ(s.at("oneOf")[1].at("required"), nlohmann::json({"stop"}));
}

}  // namespace
}  // namespace blaster
