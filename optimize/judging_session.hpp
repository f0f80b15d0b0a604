#pragma once

// A run of judged candidates, whoever sends them: optimize's proposer, a trainer through
// `blaster serve`, or `blaster eval`. Each candidate is kept in the CAS and under the run's
// folder, judged, and recorded in the optimization memory before the next one, so that nothing
// is lost when the sender or blaster dies; the session's summary is the run's report.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "optimize/attempt.hpp"
#include "optimize/optimization_memory.hpp"
#include "optimize/optimize_loop.hpp"
#include "optimize/protocol.hpp"
#include "optimize/session_resume.hpp"

namespace blaster {

class store;

class judging_session {
 public:
  // Begins run `command` in the store; candidates are written under scratch/run-<id>/.
  judging_session(store& records, step_evaluator& evaluator, std::string command, task_brief task,
                  const std::filesystem::path& scratch);
  // Takes up run `resumed` again (find_resumable_session): its recorded steps, best, baseline
  // time and time so far are read back, and the steps judged now append to them. The run cites
  // the report it had (an artifact of kind "resume"), so that how it ended before stays on record.
  // The steps it had taken and not recorded when it was interrupted (interrupted_steps) keep
  // their numbers: the next step taken comes after them.
  judging_session(store& records, step_evaluator& evaluator, task_brief task,
                  const std::filesystem::path& scratch, const resumable_session& resumed);
  judging_session(const judging_session&) = delete;
  judging_session& operator=(const judging_session&) = delete;
  // A session neither finished nor failed is marked failed: its steps stay recorded.
  ~judging_session();

  // Judges the next step: `line` as it came (kept in the CAS), `reply` what parse_reply made of
  // it (a proposal or a problem; not a stop), `request` the line blaster wrote that `line`
  // answers, as written without its newline (kept in the CAS; empty where none was: serve,
  // eval). Returns the recorded step.
  const attempt& judge(const std::string& line, const parsed_reply& reply,
                       const std::string& request = {});
  // A step under way, for several judged at once (optimize --gpus): taken in the order the
  // replies came (its number, parent and the bound it improves are those of that moment),
  // judged on any lane, and recorded in step order, so that `kept` and the best follow from the
  // rewards in order as they do one step at a time.
  struct pending_step {
    attempt step;
    std::string source;
    std::filesystem::path file;  // the candidate as written; empty: no candidate to judge
    std::string cannot_judge;    // the lane's, after judging
    nlohmann::json device;       // the lane's, after judging
    std::chrono::steady_clock::time_point asked;
    // Taken before the session was interrupted: its judging may have ended then
    // (step_evaluator::recover).
    bool taken_up = false;
  };
  // Each step taken is kept with the run (an artifact of kind "taken_step") until it is
  // recorded, so that a session interrupted while steps are under way can take them up again.
  pending_step take(const std::string& line, const parsed_reply& reply,
                    const std::string& request = {});
  // A resumed session's steps that were taken (their request written, their reply read) and not
  // recorded when it was interrupted, in step order, each to be judged (recovered where its
  // judging had ended) and recorded before the next step is taken. Returns them once.
  std::vector<pending_step> interrupted_steps();
  // Judges `p` on `evaluator` (or recovers its judging, for a step taken up again); touches
  // nothing of the session's, so lanes may judge at once.
  void evaluate(step_evaluator& evaluator, pending_step& p) const;
  const attempt& record(pending_step p);
  // The number the next step taken gets.
  [[nodiscard]] int next_step() const { return next_step_; }

  // The answer line written back for the last step judged (serve, eval), as written without
  // its newline: kept in the CAS and cited by the step.
  void keep_answer(const std::string& line);
  // A request that got no step (the proposer stopped, exited or went silent on it) and the stop
  // line it answered with, if any: kept in the CAS and named by the session's record, so that
  // its transcript ends where the conversation did.
  void set_final_exchange(const std::string& request, const std::optional<std::string>& reply);

  // The settings the session was started with (optimize_options::settings), kept with the run.
  void keep_settings(const nlohmann::json& settings);

  // Times the baseline alone (step_evaluator::time_baseline): what the first request then says
  // of the device, its ceilings and the baseline's time. Kept with the run at once (an artifact
  // of kind "baseline"), and in the session's report (each resume's too: `baselines`).
  void time_baseline();

  // What a request shows of the session so far, for step `step`.
  [[nodiscard]] request_state state_for(int step, int history, int memory_entries) const;

  // Ends the run: its report (to_json of the result) goes into the CAS.
  optimize_result finish(const std::string& ended, const std::string& why,
                         const std::string& proposer);
  // Ends the run as failed, every step recorded so far kept.
  void fail() noexcept;
  // The proposer's box, for the run's report (optimize_result::box).
  void set_box(nlohmann::json box) { result_.box = std::move(box); }

  [[nodiscard]] std::int64_t run_id() const { return result_.run_id; }
  [[nodiscard]] const std::filesystem::path& folder() const { return result_.folder; }
  [[nodiscard]] const std::vector<attempt>& steps() const { return result_.steps; }
  [[nodiscard]] const task_brief& task() const { return task_; }
  [[nodiscard]] double elapsed_s() const;
  // Why candidates cannot be judged here (no GPU), once a step found out; else empty.
  [[nodiscard]] std::string cannot_judge() const { return cannot_judge_; }

 private:
  store& records_;
  step_evaluator& evaluator_;
  task_brief task_;
  optimization_memory memory_;
  std::chrono::steady_clock::time_point started_;
  double earlier_s_ = 0.0;  // [seconds] the session's time before it was resumed
  int resumes_ = 0;         // how often the run was taken up again, this time included
  int next_step_ = 1;
  // The device as the last evaluation saw it: read from a lane only once it is idle.
  nlohmann::json device_ = nullptr;
  std::string cannot_judge_;  // why a recorded step could not be judged, once one could not
  optimize_result result_;
  std::optional<std::size_t> best_;  // into result_.steps
  std::string best_source_;
  std::optional<double> baseline_us_;
  std::vector<std::string> last_tags_;
  std::vector<attempt> interrupted_;  // taken and not recorded before the resume
  // Reads the steps of a resumed run back: the best, its source, the baseline's time, the tags,
  // the baselines timed before, and the steps taken and not recorded.
  void restore_steps();
  // `j` kept in the store as an artifact of the run, of `kind` and named `name`.
  void keep_json(std::string kind, std::string name, const nlohmann::json& j);
  // The artifact that keeps a taken step until it is recorded.
  void keep_taken(const attempt& a);
  void forget_taken(int step);
  // The bound of the kernel the next step sets out to improve: the best's, else the baseline's.
  [[nodiscard]] std::string current_bound() const;
  // The short model of the session's GPU, once an evaluation found one (device_'s).
  [[nodiscard]] std::string gpu() const;
  bool open_ = true;
};

}  // namespace blaster
