#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "optimize/attempt.hpp"
#include "optimize/proposer_box.hpp"
#include "optimize/protocol.hpp"
#include "optimize/reward.hpp"
#include "optimize/session_resume.hpp"

namespace blaster {

class store;

// The baseline timed alone before the first step: its time, the bound that keys the memory
// until a step passes, and the judging run that holds the evidence. A resumed session times it
// again, so a session has one per stretch it ran: each says where its stretch began.
struct baseline_timing {
  std::int64_t bench_run_id = 0;
  std::optional<double> time_us;  // [microseconds] none where it could not be timed
  std::string bound;              // step_bound's word; empty where it was not timed
  std::string diagnosis;          // its counters' one line, where they were collected
  std::string message;            // why there is no time (no GPU, the baseline rejected)
  // The steps taken before it was timed (the stretch's requests ask for the later ones) and,
  // of those, the steps recorded before it (the rest were taken up again after it).
  int taken_before = 0;
  int recorded_before = 0;
};
nlohmann::json to_json(const baseline_timing& t);
// What to_json wrote; a field that is absent or of another type reads as its default.
baseline_timing baseline_timing_from_json(const nlohmann::json& j);

// The session's baseline time as its record states it (`baseline_us`, the trajectory's
// baseline_ms): the baseline's time in the last step's run that timed it, else in the last run
// that timed it alone; none where none did. `blaster verify` recomputes it with this.
std::optional<double> session_baseline_us(const std::vector<attempt>& steps,
                                          const std::vector<baseline_timing>& baselines);

// Judges one candidate source: compiles it, gates it, times it against the baseline, and fills
// the attempt's outcome (status, reason, message, timing, reward, diagnosis, bench_run_id).
class step_evaluator {
 public:
  virtual ~step_evaluator() = default;
  // `session` is the optimize run the step belongs to.
  virtual void evaluate(const std::filesystem::path& source_file, std::int64_t session,
                        attempt& a) = 0;
  // A step taken before the session was interrupted (blaster killed, the machine failed) and
  // never recorded: where the judging that evaluate would have done for it ended before the
  // interruption, fills the attempt's outcome from it as evaluate would have, and returns true;
  // else false, and the step is judged again.
  virtual bool recover(const std::filesystem::path& /*source_file*/, std::int64_t /*session*/,
                       attempt& /*a*/) {
    return false;
  }
  // Times the task's baseline alone, before the first request, so that the request carries the
  // device, its ceilings and the baseline's time; none where the evaluator cannot.
  virtual std::optional<baseline_timing> time_baseline(std::int64_t /*session*/) {
    return std::nullopt;
  }
  // What the evaluations learned of the device, for the requests (device_brief.hpp: with its
  // model and ceilings); null until known.
  [[nodiscard]] virtual nlohmann::json device() const = 0;
  // Why candidates cannot be judged here (no GPU), once an evaluation found out; else empty.
  [[nodiscard]] virtual std::string cannot_judge() const = 0;
  // The session's reward protocol: the timing sessions every step's reward is drawn from
  // (reward.hpp), recorded in the session's report.
  [[nodiscard]] virtual int reward_sessions() const { return default_reward_sessions; }
};

struct optimize_options {
  std::string command;  // as the user typed it, for the run's record
  std::string proposer;  // the shell command that starts the proposer
  proposer_box_options box;  // the proposer's box: its environment, its log's cap
  task_brief task;
  std::optional<int> steps;     // at most this many steps
  std::optional<double> minutes;  // no new step after this long
  int history = 8;              // attempts each request carries back
  int memory_entries = 20;      // memory entries each request carries
  std::chrono::milliseconds reply_deadline{std::chrono::minutes(5)};
  std::size_t max_reply_bytes = 1 << 20;
  reply_limits limits;
  // Under it, run-<id>/ holds each step's source and the proposer's standard error.
  std::filesystem::path scratch;
  // The settings the session is started with, as the command that starts it spells them (its
  // flags): kept with the run (session_settings_name), so that a resume starts it the same.
  nlohmann::json settings;
  // The session to continue from its last recorded step (find_resumable_session), instead of
  // beginning one: its steps, best and time so far stay, and new steps append.
  std::optional<resumable_session> resume;
};

struct optimize_result {
  std::int64_t run_id = 0;
  std::filesystem::path folder;  // scratch/run-<id>
  std::vector<attempt> steps;
  std::optional<int> best;  // the kept step
  // Why the session ended: steps, minutes, proposer_stopped, proposer_timeout,
  // proposer_exited, proposer_flood or no_gpu; `why` says it in words.
  std::string ended;
  std::string why;
  double elapsed_s = 0.0;
  nlohmann::json device;
  std::optional<baseline_timing> baseline;  // timed before the first step, where it was
  // Every stretch's (a resumed session times the baseline again), in order; the last is
  // `baseline`. Each is kept with the run as it is timed (an artifact of kind "baseline").
  std::vector<baseline_timing> baselines;
  // The proposer's box (proposer_process::record): its confinement, and how the proposer ended
  // and what had to be killed with it. Null for serve and eval, which have no proposer.
  nlohmann::json box;
  int reward_sessions = default_reward_sessions;  // the session's reward protocol
  // The last request, which got no step (the proposer stopped, exited or timed out on it), and
  // the stop line that answered it; CAS digests, empty where there was none.
  std::string final_request_sha256;
  std::string final_reply_sha256;
};

// The session's report: the task, who proposed, how it ended, and every step.
nlohmann::json to_json(const optimize_result& r, const task_brief& task,
                       const std::string& proposer);
nlohmann::json to_json(const optimize_result& r, const optimize_options& options);

// Runs one session: starts the proposer once, then per step builds a request, waits for the
// reply, judges it and records it (optimize_steps, the source and the reply in the CAS) before
// the next request, so that nothing is lost when the proposer or blaster dies. `progress` sees
// every step as it is recorded. With options.resume, the session goes on from its last recorded
// step with a new proposer: the steps that were taken and not recorded when it was interrupted
// are recorded first (from their judging runs where those completed, else judged again), and the
// new proposer's first request carries every step so far.
optimize_result run_optimize(const optimize_options& options, store& records,
                             step_evaluator& evaluator,
                             const std::function<void(const attempt&)>& progress = {});
// With several evaluators (optimize --gpus: one per GPU), as many steps are under way at once
// (step_lanes): the proposer is asked for the next step while the earlier ones are judged, each
// on an evaluator of its own, and its request names them (`in_flight`); the steps are recorded in
// step order. The first evaluator times the baseline and is the session's.
optimize_result run_optimize(const optimize_options& options, store& records,
                             const std::vector<step_evaluator*>& evaluators,
                             const std::function<void(const attempt&)>& progress = {});

}  // namespace blaster
