#include "optimize/optimize_loop.hpp"

#include <limits>

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
          {"message", t.message},
          {"taken_before", t.taken_before},
          {"recorded_before", t.recorded_before}};
}

baseline_timing baseline_timing_from_json(const nlohmann::json& j) {
  baseline_timing t;
  if (!j.is_object()) return t;
  const auto text = [&](const char* key) {
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
  };
  const auto whole = [&](const char* key) -> std::int64_t {
    return j.contains(key) && j[key].is_number_integer() ? j[key].get<std::int64_t>() : 0;
  };
  t.bench_run_id = whole("bench_run_id");
  if (j.contains("time_us") && j["time_us"].is_number()) t.time_us = j["time_us"].get<double>();
  t.bound = text("bound");
  t.diagnosis = text("diagnosis");
  t.message = text("message");
  t.taken_before = static_cast<int>(whole("taken_before"));
  t.recorded_before = static_cast<int>(whole("recorded_before"));
  return t;
}

std::optional<double> session_baseline_us(const std::vector<attempt>& steps,
                                          const std::vector<baseline_timing>& baselines) {
  for (auto a = steps.rbegin(); a != steps.rend(); ++a) {
    if (a->baseline_us) return a->baseline_us;
  }
  for (auto t = baselines.rbegin(); t != baselines.rend(); ++t) {
    if (t->time_us) return t->time_us;
  }
  return std::nullopt;
}

nlohmann::json to_json(const optimize_result& r, const task_brief& task,
                       const std::string& proposer) {
  nlohmann::json steps = nlohmann::json::array();
  for (const attempt& a : r.steps) steps.push_back(to_json(a));
  const std::optional<double> baseline_us = session_baseline_us(r.steps, r.baselines);
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
  if (!r.baselines.empty()) {
    j["baselines"] = nlohmann::json::array();
    for (const baseline_timing& t : r.baselines) j["baselines"].push_back(to_json(t));
  }
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
    // A resumed session first records the steps it had taken and not recorded when it was
    // interrupted (on every lane, as any steps), so that no reply is lost and no number reused;
    // the new proposer's first request then carries every step so far, for it starts knowing
    // nothing of the session.
    for (judging_session::pending_step& p : session.interrupted_steps()) {
      if (ended.empty()) lanes.record_judged(/*wait=*/!lanes.free(), recorded);
      if (!ended.empty()) break;  // the rest stay taken, for the next resume
      lanes.start(std::move(p));
    }
    lanes.drain(recorded);
    bool catching_up = options.resume.has_value();
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
      request_state state =
          session.state_for(step, catching_up ? std::numeric_limits<int>::max() : options.history,
                            options.memory_entries);
      catching_up = false;
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
