#include "optimize/optimize_loop.hpp"

#include <fmt/format.h>

#include "evidence/store.hpp"
#include "optimize/judging_session.hpp"
#include "optimize/proposer_process.hpp"
#include "optimize/step_lanes.hpp"

namespace blaster {

nlohmann::json to_json(const baseline_timing& t) {
  return {{"bench_run_id", t.bench_run_id},
          {"time_us", t.time_us ? nlohmann::json(*t.time_us) : nullptr},
          {"bound", t.bound},
          {"diagnosis", t.diagnosis},
          {"message", t.message}};
}

nlohmann::json to_json(const optimize_result& r, const task_brief& task,
                       const std::string& proposer) {
  nlohmann::json steps = nlohmann::json::array();
  std::optional<double> baseline_us;
  for (const attempt& a : r.steps) {
    steps.push_back(to_json(a));
    if (a.baseline_us) baseline_us = a.baseline_us;
  }
  nlohmann::json j = {{"protocol", protocol_name},
          {"run_id", r.run_id},
          {"task", task.name},
          {"title", task.title},
          {"case", task.timed_case},
          {"shape", task.shape},
          {"dtype", task.dtype},
          {"task_brief",
           {{"name", task.name},
            {"title", task.title},
            {"case", task.timed_case},
            {"shape", task.shape},
            {"dtype", task.dtype},
            {"contract", task.contract},
            {"baseline_source", task.baseline_source}}},
          {"proposer", proposer},
          {"ended", r.ended},
          {"why", r.why},
          {"elapsed_s", r.elapsed_s},
          {"device", r.device},
          {"baseline_us", baseline_us ? nlohmann::json(*baseline_us) : nullptr},
          {"best", r.best ? nlohmann::json(*r.best) : nullptr},
          {"reward_sessions", r.reward_sessions},
          {"steps", steps}};
  if (r.baseline) j["baseline"] = to_json(*r.baseline);
  if (!r.box.is_null()) j["box"] = r.box;
  if (!r.final_request_sha256.empty()) j["final_request_sha256"] = r.final_request_sha256;
  if (!r.final_reply_sha256.empty()) j["final_reply_sha256"] = r.final_reply_sha256;
  return j;
}

nlohmann::json to_json(const optimize_result& r, const optimize_options& options) {
  return to_json(r, options.task, options.proposer);
}

optimize_result run_optimize(const optimize_options& options, store& records,
                             step_evaluator& evaluator,
                             const std::function<void(const attempt&)>& progress) {
  return run_optimize(options, records, std::vector<step_evaluator*>{&evaluator}, progress);
}

optimize_result run_optimize(const optimize_options& options, store& records,
                             const std::vector<step_evaluator*>& evaluators,
                             const std::function<void(const attempt&)>& progress) {
  step_evaluator& first = *evaluators.front();
  judging_session session =
      options.resume
          ? judging_session(records, first, options.task, options.scratch, *options.resume)
          : judging_session(records, first, options.command, options.task, options.scratch);
  try {
    if (!options.resume && !options.settings.is_null()) session.keep_settings(options.settings);
    proposer_process proposer(options.proposer, session.folder() / "proposer.log", options.box);
    // Before the first request: the proposer starts knowing the card and how far the baseline
    // is from its ceilings. Without a GPU nothing is learned, and the session goes on as before
    // (its first candidate that compiles ends it).
    session.time_baseline();
    step_lanes lanes(session, evaluators);
    std::string ended;
    std::string why;
    const auto recorded = [&](const attempt& a) {
      if (progress) progress(a);
      if (a.status == "unjudged" && ended.empty()) {
        ended = "no_gpu";
        why = session.cannot_judge();
      }
    };
    while (ended.empty()) {
      lanes.record_judged(/*wait=*/!lanes.free(), recorded);
      if (!ended.empty()) break;
      const int step = session.next_step();
      const double elapsed = session.elapsed_s();
      if (options.steps && step > *options.steps) {
        ended = "steps";
        why = fmt::format("all {} steps were taken", *options.steps);
        break;
      }
      if (options.minutes && elapsed >= *options.minutes * 60.0) {
        ended = "minutes";
        why = fmt::format("the {:g} minutes were used", *options.minutes);
        break;
      }
      request_state state = session.state_for(step, options.history, options.memory_entries);
      if (options.steps) state.steps_left = *options.steps - step + 1;
      if (options.minutes) state.seconds_left = *options.minutes * 60.0 - elapsed;
      state.in_flight = lanes.under_way();
      // The line as written is the one kept: the transcript is these bytes, not a rebuild.
      const std::string request = build_request(options.task, state).dump();
      const auto answer = proposer.ask(request, options.reply_deadline, options.max_reply_bytes);
      if (!answer.line) {
        session.set_final_exchange(request, std::nullopt);
        ended = answer.ended;
        why = answer.why;
        break;
      }
      const parsed_reply reply = parse_reply(*answer.line, options.limits);
      if (const auto* stop = std::get_if<stop_request>(&reply)) {
        // The stop itself is no step, but its exchange is kept with the run.
        session.set_final_exchange(request, *answer.line);
        ended = "proposer_stopped";
        why = stop->why.empty() ? "the proposer asked to stop"
                                : "the proposer asked to stop: " + stop->why;
        break;
      }
      lanes.start(session.take(*answer.line, reply, request));
    }
    // The steps under way are judged and recorded before the session ends.
    lanes.drain(recorded);
    // The proposer is ended before the session's record is written, so that the record says
    // how it ended and what had to be killed with it.
    proposer.stop();
    session.set_box(proposer.record());
    return session.finish(ended, why, options.proposer);
  } catch (...) {
    session.fail();  // every step recorded so far stays; the run says it failed
    throw;
  }
}

}  // namespace blaster
