#include "optimize/judging_session.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "evidence/store.hpp"
#include "evidence/store_records.hpp"
#include "optimize/untrusted_text.hpp"

namespace blaster {

judging_session::judging_session(store& records, step_evaluator& evaluator, std::string command,
                                 task_brief task, const std::filesystem::path& scratch)
    : records_(records),
      evaluator_(evaluator),
      task_(std::move(task)),
      memory_(records),
      started_(std::chrono::steady_clock::now()) {
  result_.run_id = records_.begin_run(command, task_.name, "");
  try {
    result_.folder = scratch / fmt::format("run-{}", result_.run_id);
    std::filesystem::create_directories(result_.folder);
  } catch (...) {
    fail();
    throw;
  }
}

judging_session::judging_session(store& records, step_evaluator& evaluator, task_brief task,
                                 const std::filesystem::path& scratch,
                                 const resumable_session& resumed)
    : records_(records),
      evaluator_(evaluator),
      task_(std::move(task)),
      memory_(records),
      started_(std::chrono::steady_clock::now()),
      resumes_(resumed.resumes + 1) {
  result_.run_id = resumed.run_id;
  records_.reopen_run(result_.run_id);
  try {
    restore_steps();
    // What was taken up, and when: a run's resumes are on record with it, and the report it had
    // (how it ended before) stays cited.
    nlohmann::json interrupted = nlohmann::json::array();
    for (const attempt& a : interrupted_) interrupted.push_back(a.step);
    const nlohmann::json resume = {{"resume", resumes_},
                                   {"after_step", result_.steps.size()},
                                   {"interrupted_steps", interrupted},
                                   {"status", resumed.status},
                                   {"ended", resumed.ended},
                                   {"report_sha256", resumed.report_sha256}};
    keep_json("resume", fmt::format("resume-{}.json", resumes_), resume);
    if (!resumed.report_sha256.empty()) {
      records_.record_artifact(result_.run_id,
                               {.kind = "resume",
                                .name = fmt::format("report-before-resume-{}.json", resumes_),
                                .sha256 = resumed.report_sha256,
                                .media_type = "application/json"});
    }
    result_.folder = scratch / fmt::format("run-{}", result_.run_id);
    std::filesystem::create_directories(result_.folder);
  } catch (...) {
    fail();
    throw;
  }
}

judging_session::~judging_session() { fail(); }

namespace {

constexpr std::string_view taken_step_kind = "taken_step";
constexpr std::string_view baseline_kind = "baseline";

std::string taken_step_name(int step) { return fmt::format("taken-step-{}.json", step); }

// Named by its content: NVRTC writes the file name into what it compiles, so that a source
// proposed again (the params search does, round after round) finds its compile cached.
std::filesystem::path candidate_file(const std::filesystem::path& folder,
                                     const std::string& source_sha256) {
  return folder / fmt::format("candidate-{}.cu", source_sha256.substr(0, 12));
}

// The JSON objects a run keeps as artifacts of `kind`, in the order they were kept, by name.
std::vector<std::pair<std::string, nlohmann::json>> artifacts_of(store& records,
                                                                 std::int64_t run_id,
                                                                 std::string_view kind) {
  statement s = records.db().prepare(
      "SELECT name, sha256 FROM artifacts WHERE run_id = ?1 AND kind = ?2 ORDER BY id");
  s.bind(1, run_id);
  s.bind(2, kind);
  std::vector<std::pair<std::string, nlohmann::json>> out;
  while (s.step()) {
    const auto bytes = records.cas().get(s.column_text(1));
    const nlohmann::json j = nlohmann::json::parse(bytes.value_or(std::string()), nullptr,
                                                   /*allow_exceptions=*/false);
    if (j.is_object()) out.emplace_back(s.column_text(0), j);
  }
  return out;
}

}  // namespace

void judging_session::restore_steps() {
  result_.steps = memory_.steps_of(result_.run_id);
  int last_step = 0;
  for (std::size_t i = 0; i < result_.steps.size(); ++i) {
    const attempt& a = result_.steps[i];
    last_step = std::max(last_step, a.step);
    if (a.kept) {
      best_ = i;
      best_source_ = records_.cas().get(a.source_sha256).value_or(std::string());
    }
    if (a.baseline_us) baseline_us_ = a.baseline_us;
    if (!a.source_sha256.empty()) last_tags_ = a.tags;
  }
  // The session's clock goes on where its last step ended: --minutes counts the whole session,
  // and the steps' times stay in order.
  if (!result_.steps.empty()) {
    earlier_s_ = result_.steps.back().at_s + result_.steps.back().elapsed_s;
  }
  for (const auto& [name, timed] : artifacts_of(records_, result_.run_id, baseline_kind)) {
    result_.baselines.push_back(baseline_timing_from_json(timed));
  }
  // The steps taken and not recorded: their numbers stay theirs. One recorded after all (blaster
  // ended between the two writes) is forgotten now.
  for (const auto& [name, taken] : artifacts_of(records_, result_.run_id, taken_step_kind)) {
    attempt a;
    try {
      a = attempt_from_json(taken);
    } catch (const nlohmann::json::exception&) {
      continue;
    }
    if (name != taken_step_name(a.step)) continue;
    const bool recorded = std::any_of(result_.steps.begin(), result_.steps.end(),
                                      [&](const attempt& r) { return r.step == a.step; });
    if (recorded) {
      forget_taken(a.step);
      continue;
    }
    last_step = std::max(last_step, a.step);
    earlier_s_ = std::max(earlier_s_, a.at_s);
    if (!a.source_sha256.empty()) last_tags_ = a.tags;
    interrupted_.push_back(std::move(a));
  }
  std::sort(interrupted_.begin(), interrupted_.end(),
            [](const attempt& x, const attempt& y) { return x.step < y.step; });
  next_step_ = last_step + 1;
}

void judging_session::keep_json(std::string kind, std::string name, const nlohmann::json& j) {
  records_.record_artifact(result_.run_id, {.kind = std::move(kind),
                                            .name = std::move(name),
                                            .sha256 = records_.cas().put(j.dump(1)),
                                            .media_type = "application/json"});
}

void judging_session::keep_taken(const attempt& a) {
  keep_json(std::string(taken_step_kind), taken_step_name(a.step), to_json(a));
}

void judging_session::forget_taken(int step) {
  statement s =
      records_.db().prepare("DELETE FROM artifacts WHERE run_id = ?1 AND kind = ?2 AND name = ?3");
  s.bind(1, result_.run_id);
  s.bind(2, taken_step_kind);
  s.bind(3, taken_step_name(step));
  s.step();
}

std::vector<judging_session::pending_step> judging_session::interrupted_steps() {
  std::vector<pending_step> steps;
  for (attempt& a : interrupted_) {
    pending_step p;
    p.asked = std::chrono::steady_clock::now();
    p.taken_up = true;
    if (!a.source_sha256.empty()) {
      const auto source = records_.cas().get(a.source_sha256);
      if (!source) {
        BLASTER_THROW("the store lacks object {}, the source of step {}", a.source_sha256, a.step);
      }
      p.source = *source;
      p.file = candidate_file(result_.folder, a.source_sha256);
      write_file_atomically(p.file, p.source);
    }
    p.step = std::move(a);
    steps.push_back(std::move(p));
  }
  interrupted_.clear();
  return steps;
}

void judging_session::keep_settings(const nlohmann::json& settings) {
  keep_json("settings", std::string(session_settings_name), settings);
}

void judging_session::time_baseline() {
  result_.baseline = evaluator_.time_baseline(result_.run_id);
  device_ = evaluator_.device();
  if (!result_.baseline) return;
  baseline_timing& t = *result_.baseline;
  t.taken_before = next_step_ - 1;
  t.recorded_before = static_cast<int>(result_.steps.size());
  if (t.time_us) baseline_us_ = t.time_us;
  result_.baselines.push_back(t);
  keep_json(std::string(baseline_kind),
            resumes_ > 0 ? fmt::format("baseline-resume-{}.json", resumes_) : "baseline.json",
            to_json(t));
}

std::string judging_session::current_bound() const {
  if (best_) return result_.steps[*best_].bound;
  return result_.baseline ? result_.baseline->bound : std::string();
}

std::string judging_session::gpu() const {
  return device_.is_object() ? device_.value("model", std::string()) : std::string();
}

double judging_session::elapsed_s() const {
  return earlier_s_ +
         std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

judging_session::pending_step judging_session::take(const std::string& line,
                                                    const parsed_reply& reply,
                                                    const std::string& request) {
  pending_step p;
  p.asked = std::chrono::steady_clock::now();
  attempt& a = p.step;
  a.step = next_step_++;
  if (best_) a.parent = result_.steps[*best_].step;
  a.at_s = elapsed_s();
  a.improved_bound = current_bound();
  a.reply_sha256 = records_.cas().put(line);
  if (!request.empty()) a.request_sha256 = records_.cas().put(request);
  if (const auto* bad = std::get_if<reply_problem>(&reply)) {
    a.reason = bad->reason;
    a.message = bad->detail;
    keep_taken(a);
    return p;
  }
  const auto& proposed = std::get<proposal>(reply);
  a.hypothesis = proposed.hypothesis;
  a.kind = proposed.kind;
  a.tags = proposed.tags;
  a.sessions = proposed.sessions.value_or(0);
  last_tags_ = proposed.tags;
  p.source = proposed.source;
  a.source_sha256 = records_.cas().put(p.source);
  p.file = candidate_file(result_.folder, a.source_sha256);
  write_file_atomically(p.file, p.source);
  keep_taken(a);
  return p;
}

void judging_session::evaluate(step_evaluator& evaluator, pending_step& p) const {
  if (!p.file.empty() && !(p.taken_up && evaluator.recover(p.file, result_.run_id, p.step))) {
    evaluator.evaluate(p.file, result_.run_id, p.step);
  }
  p.cannot_judge = evaluator.cannot_judge();
  p.device = evaluator.device();
}

const attempt& judging_session::record(pending_step p) {
  attempt& a = p.step;
  if (!p.device.is_null()) device_ = p.device;
  if (!p.cannot_judge.empty()) cannot_judge_ = p.cannot_judge;
  // What the step keeps is sent back to the proposer and exported: valid UTF-8, whatever bytes
  // the evaluation quoted, and no folder of the home (a compile error names the candidate's
  // file by the path it was written to).
  for (std::string* text : {&a.message, &a.log, &a.diagnosis}) {
    *text = without_home_paths(without_home_paths(valid_utf8(*text), result_.folder),
                               records_.home());
  }
  if (a.gpu.empty()) a.gpu = gpu();  // a reply that was no candidate: the session's card
  a.status = !p.cannot_judge.empty() && a.reason.empty() ? "unjudged"
                                                         : std::string(trajectory_status(a.reason));
  if (a.status == "ok" && (!best_ || a.reward > result_.steps[*best_].reward)) a.kept = true;
  if (a.baseline_us) baseline_us_ = a.baseline_us;
  a.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - p.asked).count();
  memory_.record(result_.run_id, task_.name, task_.timed_case, a);
  forget_taken(a.step);
  result_.steps.push_back(a);
  if (a.kept) {
    if (best_) result_.steps[*best_].kept = false;
    best_ = result_.steps.size() - 1;
    best_source_ = p.source;
  }
  return result_.steps.back();
}

const attempt& judging_session::judge(const std::string& line, const parsed_reply& reply,
                                      const std::string& request) {
  pending_step p = take(line, reply, request);
  evaluate(evaluator_, p);
  return record(std::move(p));
}

void judging_session::keep_answer(const std::string& line) {
  if (result_.steps.empty()) return;
  attempt& a = result_.steps.back();
  a.answer_sha256 = records_.cas().put(line);
  memory_.record_answer(result_.run_id, a.step, a.answer_sha256);
}

void judging_session::set_final_exchange(const std::string& request,
                                         const std::optional<std::string>& reply) {
  result_.final_request_sha256 = records_.cas().put(request);
  result_.final_reply_sha256 = reply ? records_.cas().put(*reply) : std::string();
  // Cited by rows of the run, so that an export, a merge and verify carry them as they carry
  // the steps' requests and replies. Each resume of the run has its own ending.
  const std::string suffix = resumes_ > 0 ? fmt::format("-resume-{}", resumes_) : std::string();
  records_.record_artifact(result_.run_id, {.kind = "transcript",
                                            .name = "final_request" + suffix + ".jsonl",
                                            .sha256 = result_.final_request_sha256,
                                            .media_type = "application/json"});
  if (reply) {
    records_.record_artifact(result_.run_id, {.kind = "transcript",
                                              .name = "final_reply" + suffix + ".jsonl",
                                              .sha256 = result_.final_reply_sha256,
                                              .media_type = "application/json"});
  }
}

request_state judging_session::state_for(int step, int history, int memory_entries) const {
  request_state state;
  state.step = step;
  state.device = device_;
  state.baseline_us = baseline_us_;
  if (best_) {
    state.best = &result_.steps[*best_];
    state.best_source = best_source_;
  }
  const std::size_t keep = static_cast<std::size_t>(std::max(history, 0));
  const std::size_t first = result_.steps.size() > keep ? result_.steps.size() - keep : 0;
  for (std::size_t i = first; i < result_.steps.size(); ++i) {
    state.recent.push_back(&result_.steps[i]);
  }
  state.memory = memory_for_request(memory_,
                                    {.task = task_.name,
                                     .tags = last_tags_,
                                     .this_run = result_.run_id,
                                     .gpu = gpu(),
                                     .bound = current_bound()},
                                    memory_entries);
  return state;
}

optimize_result judging_session::finish(const std::string& ended, const std::string& why,
                                        const std::string& proposer) {
  result_.ended = ended;
  result_.why = why;
  if (best_) result_.best = result_.steps[*best_].step;
  result_.elapsed_s = elapsed_s();
  result_.device = device_;
  result_.reward_sessions = evaluator_.reward_sessions();
  const std::string report = records_.cas().put(to_json(result_, task_, proposer).dump(1));
  records_.finish_run(result_.run_id, ended == "no_gpu" ? "no_gpu" : "completed", report);
  open_ = false;
  return result_;
}

void judging_session::fail() noexcept {
  if (!open_) return;
  open_ = false;
  try {
    records_.finish_run(result_.run_id, "failed", "");
  } catch (...) {
    // The run stays "running" in the store: `blaster runs` shows it unfinished.
  }
}

}  // namespace blaster
