#include "optimize/optimize_loop.hpp"

#include <fmt/format.h>

#include "core/file_io.hpp"
#include "evidence/store.hpp"
#include "optimize/optimization_memory.hpp"
#include "optimize/proposer_process.hpp"

namespace blaster {
namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

}  // namespace

nlohmann::json to_json(const optimize_result& r, const optimize_options& options) {
  nlohmann::json steps = nlohmann::json::array();
  std::optional<double> baseline_us;
  for (const attempt& a : r.steps) {
    steps.push_back(to_json(a));
    if (a.baseline_us) baseline_us = a.baseline_us;
  }
  return {{"protocol", protocol_name},
          {"run_id", r.run_id},
          {"task", options.task.name},
          {"title", options.task.title},
          {"case", options.task.timed_case},
          {"shape", options.task.shape},
          {"dtype", options.task.dtype},
          {"task_brief",
           {{"name", options.task.name},
            {"title", options.task.title},
            {"case", options.task.timed_case},
            {"shape", options.task.shape},
            {"dtype", options.task.dtype},
            {"contract", options.task.contract},
            {"baseline_source", options.task.baseline_source}}},
          {"proposer", options.proposer},
          {"ended", r.ended},
          {"why", r.why},
          {"elapsed_s", r.elapsed_s},
          {"device", r.device},
          {"baseline_us", baseline_us ? nlohmann::json(*baseline_us) : nullptr},
          {"best", r.best ? nlohmann::json(*r.best) : nullptr},
          {"steps", steps}};
}

optimize_result run_optimize(const optimize_options& options, store& records,
                             step_evaluator& evaluator,
                             const std::function<void(const attempt&)>& progress) {
  const auto started = clock_type::now();
  optimize_result result;
  result.run_id = records.begin_run(options.command, options.task.name, "");
  optimization_memory memory(records);
  try {
    const auto scratch = options.scratch / fmt::format("run-{}", result.run_id);
    result.folder = scratch;
    std::filesystem::create_directories(scratch);
    proposer_process proposer(options.proposer, scratch / "proposer.log");
    std::optional<std::size_t> best;  // index into result.steps
    std::string best_source;
    std::optional<double> baseline_us;
    std::vector<std::string> last_tags;
    for (int step = 1;; ++step) {
      const double elapsed = seconds_since(started);
      if (options.steps && step > *options.steps) {
        result.ended = "steps";
        result.why = fmt::format("all {} steps were taken", *options.steps);
        break;
      }
      if (options.minutes && elapsed >= *options.minutes * 60.0) {
        result.ended = "minutes";
        result.why = fmt::format("the {:g} minutes were used", *options.minutes);
        break;
      }
      request_state state;
      state.step = step;
      if (options.steps) state.steps_left = *options.steps - step + 1;
      if (options.minutes) state.seconds_left = *options.minutes * 60.0 - elapsed;
      state.device = evaluator.device();
      state.baseline_us = baseline_us;
      if (best) {
        state.best = &result.steps[*best];
        state.best_source = best_source;
      }
      const std::size_t first_recent =
          result.steps.size() > static_cast<std::size_t>(options.history)
              ? result.steps.size() - static_cast<std::size_t>(options.history)
              : 0;
      for (std::size_t i = first_recent; i < result.steps.size(); ++i) {
        state.recent.push_back(&result.steps[i]);
      }
      state.memory = memory_for_request(memory, options.task.name, last_tags, result.run_id,
                                        options.memory_entries);

      const auto asked = clock_type::now();
      const auto answer = proposer.ask(build_request(options.task, state).dump(),
                                       options.reply_deadline, options.max_reply_bytes);
      if (!answer.line) {
        result.ended = answer.ended;
        result.why = answer.why;
        break;
      }
      attempt a;
      a.step = step;
      if (best) a.parent = result.steps[*best].step;
      a.at_s = seconds_since(started);
      a.reply_sha256 = records.cas().put(*answer.line);
      const parsed_reply reply = parse_reply(*answer.line, options.limits);
      if (const auto* stop = std::get_if<stop_request>(&reply)) {
        result.ended = "proposer_stopped";
        result.why = stop->why.empty() ? "the proposer asked to stop"
                                       : "the proposer asked to stop: " + stop->why;
        break;
      }
      std::string source;
      if (const auto* bad = std::get_if<reply_problem>(&reply)) {
        a.reason = bad->reason;
        a.message = bad->detail;
      } else {
        const auto& p = std::get<proposal>(reply);
        a.hypothesis = p.hypothesis;
        a.kind = p.kind;
        a.tags = p.tags;
        a.sessions = p.sessions.value_or(0);
        last_tags = p.tags;
        source = p.source;
        a.source_sha256 = records.cas().put(source);
        const auto file = scratch / fmt::format("step-{}.cu", step);
        write_file_atomically(file, source);
        evaluator.evaluate(file, result.run_id, a);
      }
      const std::string unjudged = evaluator.cannot_judge();
      a.status = !unjudged.empty() && a.reason.empty() ? "unjudged"
                                                       : std::string(trajectory_status(a.reason));
      if (a.status == "ok" && (!best || a.reward > result.steps[*best].reward)) {
        a.kept = true;
      }
      if (a.baseline_us) baseline_us = a.baseline_us;
      a.elapsed_s = seconds_since(asked);
      memory.record(result.run_id, options.task.name, options.task.timed_case, a);
      result.steps.push_back(a);
      if (a.kept) {
        if (best) result.steps[*best].kept = false;
        best = result.steps.size() - 1;
        best_source = source;
      }
      if (progress) progress(result.steps.back());
      if (a.status == "unjudged") {
        result.ended = "no_gpu";
        result.why = unjudged;
        break;
      }
    }
  } catch (...) {
    // Every step recorded so far stays; the run says it failed.
    result.elapsed_s = seconds_since(started);
    records.finish_run(result.run_id, "failed", "");
    throw;
  }
  if (!result.steps.empty()) {
    for (const attempt& a : result.steps) {
      if (a.kept) result.best = a.step;
    }
  }
  result.elapsed_s = seconds_since(started);
  result.device = evaluator.device();
  const std::string report = records.cas().put(to_json(result, options).dump(1));
  records.finish_run(result.run_id, result.ended == "no_gpu" ? "no_gpu" : "completed", report);
  return result;
}

}  // namespace blaster
