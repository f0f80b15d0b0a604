#include "optimize/protocol.hpp"

#include <fmt/format.h>

#include "core/dtype.hpp"
#include "core/file_io.hpp"
#include "optimize/untrusted_text.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {
namespace {

reply_problem problem(std::string detail) {
  return reply_problem{.reason = "invalid_reply", .detail = std::move(detail)};
}

// The first line of a text, for a field that must be one line; cut between characters, since
// a cut inside one would leave bytes that no JSON form can hold.
std::string one_line(std::string_view text, std::size_t max_chars) {
  return first_chars(text.substr(0, text.find_first_of("\r\n")), max_chars);
}

// nlohmann's account of a parse error quotes what it read last: a few words of it are enough.
constexpr std::size_t max_parse_error_chars = 300;

}  // namespace

parsed_reply parse_reply(std::string_view line, const reply_limits& limits) {
  // JSON is UTF-8 text; a stray byte is named here, so that no message quotes it raw (a byte
  // that is not UTF-8 in the store would break every later JSON form of the step).
  if (const auto at = invalid_utf8_at(line)) {
    return problem(fmt::format(
        "the reply is not UTF-8 text: byte 0x{:02X} at offset {}; JSON is UTF-8, so send any "
        "other byte as an escape",
        static_cast<unsigned char>(line[*at]), *at));
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann's message names the byte; the line itself is in the CAS.
    return problem(first_chars(fmt::format("the reply is not JSON: {}", e.what()),
                               max_parse_error_chars));
  }
  if (!j.is_object()) return problem("the reply is not a JSON object");
  if (j.contains("stop")) {
    if (!j.at("stop").is_boolean()) return problem("\"stop\" must be true or false");
    if (j.at("stop").get<bool>()) {
      const auto why = j.value("why", nlohmann::json(""));
      return stop_request{.why = why.is_string() ? one_line(why.get<std::string>(), 500) : ""};
    }
  }
  if (!j.contains("source")) {
    return problem("the reply has no \"source\": a candidate is {\"source\": \"/* blaster ... */ "
                   "...\", \"hypothesis\": \"...\", \"tags\": [...]}");
  }
  if (!j.at("source").is_string()) return problem("\"source\" must be a string");
  proposal p;
  p.source = j.at("source").get<std::string>();
  if (p.source.find_first_not_of(" \t\r\n") == std::string::npos) {
    return problem("\"source\" is empty");
  }
  if (p.source.size() > limits.max_source_bytes) {
    return problem(fmt::format("\"source\" has {} bytes, more than the {} a candidate may have",
                               p.source.size(), limits.max_source_bytes));
  }
  if (p.source.find('\0') != std::string::npos) return problem("\"source\" holds a NUL byte");
  for (const char* key : {"hypothesis", "kind"}) {
    if (j.contains(key) && !j.at(key).is_string()) {
      return problem(fmt::format("\"{}\" must be a string", key));
    }
  }
  p.hypothesis = one_line(j.value("hypothesis", std::string()), limits.max_hypothesis_chars);
  p.kind = one_line(j.value("kind", std::string()), limits.max_tag_chars);
  if (j.contains("tags")) {
    const auto& tags = j.at("tags");
    if (!tags.is_array()) return problem("\"tags\" must be a list of strings");
    for (const auto& t : tags) {
      if (!t.is_string()) return problem("\"tags\" must be a list of strings");
      // The first max_tags are kept; the rest are dropped, as a long hypothesis is cut.
      if (p.tags.size() < limits.max_tags) {
        p.tags.push_back(one_line(t.get<std::string>(), limits.max_tag_chars));
      }
    }
  }
  if (j.contains("sessions")) {
    const auto& n = j.at("sessions");
    if (!n.is_number_integer() || n.get<std::int64_t>() < 1 ||
        n.get<std::int64_t>() > limits.max_sessions) {
      return problem(fmt::format("\"sessions\" must be an integer from 1 to {}",
                                 limits.max_sessions));
    }
    p.sessions = n.get<int>();
  }
  return p;
}

task_brief brief_of(const std::filesystem::path& root, const std::string& name,
                    const std::string& case_name) {
  const task_spec task = load_task(root, name);
  const task_case& timed = task.find_case(case_name.empty() ? task.canonical_case : case_name);
  task_brief b{.name = task.name,
               .title = task.title,
               .contract = nlohmann::json::parse(read_file(task.dir / "task.json")),
               .baseline_source = read_file(task.dir / "init.cu"),
               .timed_case = timed.name,
               .shape = task.describe(timed),
               .dtype = task.data_dtype()};
  return b;
}

std::string_view candidate_format() {
  return "One CUDA C++ file of device code, compiled by NVRTC for the GPU's architecture; blaster "
         "owns all host code. It starts with its launch plan in a block comment: /* blaster "
         "{\"launch\": [{\"kernel\": \"name<PARAM>\", \"grid\": EXPR, \"block\": EXPR, "
         "\"shared_bytes\": EXPR, \"args\": [buffer and symbol names, or integer "
         "expressions]}], \"scratch\": {\"name\": EXPR bytes}, \"params\": {\"NAME\": "
         "[values]}} */. EXPR: integers, the task's symbols, + - * / %, parentheses, ceil_div, "
         "min, max. Launches run in order on one stream; each params combination is a variant "
         "(a -D define, or a template argument in the kernel's name expression); optional: "
         "cooperative, cluster dims, max_dynamic_shared_bytes. It may include only the CUDA "
         "toolkit's headers and kernels/common/. Every output element must be written, inputs "
         "left unchanged, results deterministic and within the task's tolerance of the float64 "
         "reference on every case.";
}

nlohmann::json feedback_json(const attempt& a) {
  nlohmann::json j = {{"step", a.step},     {"hypothesis", a.hypothesis}, {"tags", a.tags},
                      {"status", a.status}, {"reason", a.reason},         {"message", a.message}};
  if (!a.log.empty()) j["compile_log"] = a.log;
  if (a.error_line) j["error_line"] = *a.error_line;
  if (a.sessions > 0) j["sessions"] = a.sessions;
  if (a.time_us) {
    j["variant"] = a.variant;
    j["params"] = a.params;
    j["time_us"] = *a.time_us;
    if (a.speedup) j["speedup"] = *a.speedup;
    if (a.speedup_low && a.speedup_high) {
      j["speedup_interval"] = {*a.speedup_low, *a.speedup_high};
    }
    if (a.roofline_pct) j["roofline_pct"] = *a.roofline_pct;
  }
  j["reward"] = a.reward;
  if (a.reward_sessions > 0) j["reward_sessions"] = a.reward_sessions;
  if (!a.diagnosis.empty()) j["diagnosis"] = a.diagnosis;
  if (!a.bound.empty()) j["bound"] = a.bound;
  return j;
}

nlohmann::json build_request(const task_brief& task, const request_state& state) {
  nlohmann::json recent = nlohmann::json::array();
  for (const attempt* a : state.recent) recent.push_back(feedback_json(*a));
  nlohmann::json best = nullptr;
  if (state.best != nullptr) {
    best = feedback_json(*state.best);
    best["source"] = state.best_source;
  }
  nlohmann::json j = {
      {"protocol", protocol_name},
      {"type", "propose"},
      {"step", state.step},
      {"steps_left", state.steps_left ? nlohmann::json(*state.steps_left) : nullptr},
      {"seconds_left", state.seconds_left ? nlohmann::json(*state.seconds_left) : nullptr},
      {"task",
       {{"name", task.name},
        {"title", task.title},
        {"contract", task.contract},
        {"case", task.timed_case},
        {"shape", task.shape},
        {"dtype", task.dtype},
        {"baseline_source", task.baseline_source},
        {"candidate_format", candidate_format()}}},
      {"device", state.device},
      {"baseline_us", state.baseline_us ? nlohmann::json(*state.baseline_us) : nullptr},
      {"best", best},
      {"attempts", recent},
      {"memory", state.memory},
  };
  if (!state.in_flight.empty()) j["in_flight"] = state.in_flight;
  return j;
}

}  // namespace blaster
