#pragma once

// The proposer protocol (optimize/PROTOCOL.md): newline-delimited JSON, one request from
// blaster, then one reply from the proposer, per step. Requests are built here from what the
// loop knows; replies are parsed here, and a reply that is not a candidate is a problem with a
// reason, never an exception.

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "optimize/attempt.hpp"

namespace blaster {

inline constexpr std::string_view protocol_name = "blaster-optimize/1";

// What a reply may hold: a candidate, or the proposer's wish to end the session.
struct proposal {
  std::string source;      // one .cu file with its launch plan, as bench takes a candidate
  std::string hypothesis;  // one line: what it tries and why
  std::string kind;
  std::vector<std::string> tags;
  std::optional<int> sessions;  // timing sessions asked for this candidate; none: the run's
};
struct stop_request {
  std::string why;
};
// Why a reply is neither: `reason` is invalid_reply, `detail` says what is wrong in words.
struct reply_problem {
  std::string reason = "invalid_reply";
  std::string detail;
};
using parsed_reply = std::variant<proposal, stop_request, reply_problem>;

struct reply_limits {
  std::size_t max_source_bytes = 256 * 1024;
  std::size_t max_hypothesis_chars = 500;
  std::size_t max_tags = 16;
  std::size_t max_tag_chars = 64;
  int max_sessions = 32;
};

parsed_reply parse_reply(std::string_view line, const reply_limits& limits = {});

// The task as the proposer needs it: the contract, the baseline and the candidate format.
struct task_brief {
  std::string name;
  std::string title;
  nlohmann::json contract;  // task.json
  std::string baseline_source;
  std::string timed_case;
  std::string shape;
  std::string dtype;
};

// The brief of task `name` under `root`, timed on `case_name` (empty: the canonical case). A
// task or case that is not there is an input_error.
task_brief brief_of(const std::filesystem::path& root, const std::string& name,
                    const std::string& case_name);

// The candidate format, in words, as every request states it.
std::string_view candidate_format();

struct request_state {
  int step = 0;
  std::optional<int> steps_left;
  std::optional<double> seconds_left;
  nlohmann::json device;                 // null until the first evaluation saw it
  std::optional<double> baseline_us;
  const attempt* best = nullptr;         // the best step so far, if any passed
  std::string best_source;               // its source
  std::vector<const attempt*> recent;    // the last attempts, oldest first
  nlohmann::json memory = nlohmann::json::array();  // memory_entry JSON, most useful first
  // The steps asked for and not judged yet (several GPUs): step, hypothesis, tags; sent only
  // where there are some, so that a session of one GPU sends what it always did.
  nlohmann::json in_flight = nlohmann::json::array();
};

// One request line's JSON: the protocol's name, the step, the task, the device, the best so far
// with its source, the recent attempts as feedback and the memory's entries.
nlohmann::json build_request(const task_brief& task, const request_state& state);

// An attempt as feedback: what a proposer needs to learn from it (no digests, no bookkeeping).
nlohmann::json feedback_json(const attempt& a);

}  // namespace blaster
