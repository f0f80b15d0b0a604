#include "benchmarking/worker/worker_launcher.hpp"

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "benchmarking/gate/reason_code.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/worker_process.hpp"

namespace blaster {

worker_answer worker_launcher::run(const worker_request& request,
                                   std::chrono::milliseconds deadline,
                                   const std::vector<std::string>& wrapper) const {
  using json = nlohmann::json;
  const auto request_path =
      dir / fmt::format("request-{}-{}-{}.json", to_string(request.phase), ::getpid(), lane);
  write_file_atomically(request_path, to_json(request).dump());
  worker_outcome outcome;
  const bool use_kept =
      kept != nullptr && wrapper.empty() &&
      (request.phase == worker_phase::gate || request.phase == worker_phase::time);
  if (use_kept) {
    // The answer ends with its result line; a line that is not JSON cannot be one.
    const auto is_result = [](const std::string& line) {
      const json message = json::parse(line, nullptr, /*allow_exceptions=*/false);
      return message.is_object() && message.contains("result");
    };
    outcome = kept->exchange(request_path.string(), deadline, is_result);
  } else {
    std::vector<std::string> argv = wrapper;
    argv.insert(argv.end(), {executable.string(), "__worker", request_path.string()});
    outcome = run_worker(argv, deadline, {}, worker_limits_for(visible));
  }
  std::error_code ignored;
  std::filesystem::remove(request_path, ignored);
  worker_answer answer;
  answer.wall_s = outcome.wall_s;
  answer.exit_code = outcome.how == worker_outcome::ending::exited ? outcome.exit_code : -1;
  std::optional<worker_result> result;
  json last_step;
  // Each step lasts until the next message; what precedes the first is the worker's start.
  std::string current = "start";
  double since_ms = 0.0;
  auto account = [&](double until_ms) {
    answer.profile[current] += std::max(0.0, until_ms - since_ms);
    since_ms = until_ms;
  };
  for (const auto& line : outcome.messages) {
    const json message = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!message.is_object()) continue;
    if (message.contains("ms") && message["ms"].is_number()) {
      account(message["ms"].get<double>());
      if (message.contains("step") && message["step"].is_string()) {
        const auto name = message["step"].get<std::string>();
        current = name.substr(0, name.find(' '));  // "run 2" counts as "run"
      }
    }
    if (message.contains("step")) {
      last_step = message;
    } else if (message.contains("result")) {
      // A result the worker did not finish writing is no result: the ending says why.
      try {
        result = worker_result_from_json(message["result"]);
      } catch (const std::exception&) {
        result.reset();
      }
    }
  }
  answer.profile["process"] = std::max(0.0, 1000.0 * outcome.wall_s - since_ms);
  if (use_kept && outcome.how == worker_outcome::ending::answered &&
      (!result || result->failure || result->unavailable || result->leaving)) {
    // A kept worker leaves after a failure or a candidate that used the device heap: it is
    // gone before the next evaluation starts.
    kept->stop();
  }
  if (result && outcome.how != worker_outcome::ending::timed_out) {
    answer.result = std::move(result);
    return answer;
  }
  answer.ended = reason_for_worker_ending(outcome);
  std::string where;
  if (last_step.is_object() && last_step["step"].is_string()) {
    where = last_step.contains("check") && last_step["check"].is_number_unsigned()
                ? fmt::format(" during {} of check {}", last_step["step"].get<std::string>(),
                              last_step["check"].get<std::size_t>())
                : fmt::format(" during {}", last_step["step"].get<std::string>());
  }
  if (stopped_from_outside(outcome)) {
    BLASTER_THROW("the worker {}{}: a stop sent from outside blaster, not the candidate's doing; "
                  "the run stops here (run the command again to redo it)",
                  outcome.describe(), where);
  }
  answer.why = fmt::format("the worker {}{}", outcome.describe(), where);
  return answer;
}

std::vector<std::string> kept_worker_argv(const std::filesystem::path& executable) {
  return {executable.string(), "__worker", "--serve"};
}

worker_limits worker_limits_for(const std::string& visible) {
  worker_limits limits;
  if (!visible.empty()) limits.environment.push_back("CUDA_VISIBLE_DEVICES=" + visible);
  return limits;
}

}  // namespace blaster
