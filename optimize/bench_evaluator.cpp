#include "optimize/bench_evaluator.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "benchmarking/worker/gate_protocol.hpp"
#include "core/file_io.hpp"
#include "evidence/store.hpp"
#include "optimize/device_brief.hpp"
#include "optimize/untrusted_text.hpp"
#include "profiling/diagnosis.hpp"

namespace blaster {
namespace {

// A compile log as feedback: enough to find the error, never a flood.
constexpr std::size_t max_log_chars = 8192;
constexpr int min_interval_sessions = 2;

}  // namespace

std::string step_bound(const variant_result& r) {
  if (!r.time_us) return "";
  if (r.profile && r.profile->diagnosis) return std::string(to_string(r.profile->diagnosis->bound));
  // Without counters the roofline still tells the two bounds it can see; latency (too few warps,
  // dependent accesses) looks like nothing in it, so the rest is unknown, not latency-bound.
  if (r.launch_bound) return std::string(to_string(bound_by::launch));
  if (r.time_over_floor && *r.time_over_floor > 0 && 100.0 / *r.time_over_floor >= busy_unit_pct) {
    return std::string(to_string(bound_by::bandwidth));
  }
  if (r.matrix_rate_pct && *r.matrix_rate_pct >= busy_unit_pct) {
    return std::string(to_string(bound_by::compute));
  }
  return std::string(unknown_bound);
}

void fill_outcome(const bench_report& report, attempt& a, std::string_view source,
                  int reward_sessions) {
  a.bench_run_id = report.run_id;
  a.phase_ms = report.phase_ms;
  if (report.device) a.gpu = gpu_model(report.device->name);
  const variant_result* fastest = nullptr;
  const variant_result* rejected = nullptr;
  const variant_result* baseline = nullptr;
  bool any = false;
  for (const variant_result& r : report.results) {
    if (r.baseline) {
      if (baseline == nullptr) baseline = &r;
      if (r.time_us && !a.baseline_us) a.baseline_us = r.time_us;
      continue;
    }
    any = true;
    if (r.reason != reason_code::none) {
      if (rejected == nullptr) rejected = &r;
    } else if (r.status == "passed" && r.time_us &&
               (fastest == nullptr || *r.time_us < *fastest->time_us)) {
      fastest = &r;
    }
  }
  if (!any) {
    a.reason = "plan_error";
    a.message = "the source gave no variant to judge";
    return;
  }
  if (fastest == nullptr) {
    if (rejected == nullptr) return;  // compiled, and nothing further ran (no GPU)
    a.reason = std::string(to_string(rejected->reason));
    a.message = rejected->message;
    a.variant = rejected->label;
    a.params = rejected->params;
    if (rejected->reason == reason_code::compile_error ||
        rejected->reason == reason_code::plan_error) {
      a.log = first_bytes(rejected->log, max_log_chars);
      a.error_line = first_error_line(
          rejected->log, std::filesystem::path(rejected->file).filename().string(), source);
    }
    return;
  }
  const variant_result& r = *fastest;
  a.reason.clear();
  a.message = r.message;
  // The candidate passed, but a speedup needs the baseline's time of the same run: say why it
  // has none, so that the missing reward is not taken for the candidate's fault.
  if (baseline != nullptr && baseline->reason != reason_code::none) {
    a.message = fmt::format("no speedup: the baseline was rejected in this run ({}: {})",
                            to_string(baseline->reason), baseline->message);
  }
  a.variant = r.label;
  a.params = r.params;
  a.time_us = r.time_us;
  a.speedup = r.speedup;
  // One session's bootstrap can only draw that session again: its "interval" is the point
  // estimate, which one lucky sample moves. An interval needs two sessions at least.
  if (r.verdict && r.verdict->sessions >= min_interval_sessions) {
    a.speedup_low = r.verdict->speedup.low;
    a.speedup_high = r.verdict->speedup.high;
  }
  // Noise cannot lift the reward, nor can asking for more sessions: it is the low end of the
  // interval over the protocol's first sessions, or nothing without a baseline that passed.
  a.reward = 0.0;
  a.reward_sessions = reward_sessions;
  if (baseline != nullptr && baseline->reason == reason_code::none && a.speedup) {
    a.reward = protocol_reward(baseline->session_medians_us, r.session_medians_us,
                               report.bootstrap_seed, reward_sessions)
                   .value_or(0.0);
  }
  if (r.time_over_floor && *r.time_over_floor > 0) a.roofline_pct = 100.0 / *r.time_over_floor;
  if (r.profile && r.profile->diagnosis) a.diagnosis = r.profile->diagnosis->line;
  a.bound = step_bound(r);
}

bench_options bench_evaluator::step_options(const std::filesystem::path& source_file,
                                            std::int64_t session, const attempt& a) const {
  bench_options o = options_;
  o.candidates = {source_file};
  if (a.sessions > 0) o.sessions = a.sessions;
  // The reward's sessions are timed whatever the reply asked for: a screen of one session
  // costs the protocol's sessions too, so that its reward is the same number as any other's.
  o.sessions = std::max(o.sessions, reward_sessions_);
  o.command = fmt::format(
      "blaster bench --task {} --candidate {} --sessions {}{} (step {} of run {})", o.task,
      source_file.filename().string(), o.sessions, o.profile ? " --profile" : "", a.step, session);
  return o;
}

void bench_evaluator::take_outcome(const bench_report& report,
                                   const std::filesystem::path& source_file, attempt& a) {
  if (report.device) device_ = device_brief(report);
  fill_outcome(report, a, read_file(source_file), reward_sessions_);
  if (!report.gpu && a.reason.empty()) cannot_judge_ = report.gpu_unavailable;
}

void bench_evaluator::evaluate(const std::filesystem::path& source_file, std::int64_t session,
                               attempt& a) {
  const bench_report report = run_bench(step_options(source_file, session, a), records_, &warm_);
  take_outcome(report, source_file, a);
}

bool bench_evaluator::recover(const std::filesystem::path& source_file, std::int64_t session,
                              attempt& a) {
  // A run that completed judged the step on a GPU (one without a GPU ends as no_gpu, and is
  // judged again); the newest, should the step have been taken up before.
  statement s = records_.db().prepare(
      "SELECT report_sha256 FROM runs WHERE command = ?1 AND status = 'completed' AND "
      "report_sha256 IS NOT NULL ORDER BY id DESC LIMIT 1");
  s.bind(1, step_options(source_file, session, a).command);
  if (!s.step()) return false;
  const auto bytes = records_.cas().get(s.column_text(0));
  if (!bytes) return false;
  const nlohmann::json stored = nlohmann::json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
  if (!stored.is_object()) return false;
  try {
    take_outcome(bench_report_from_json(stored), source_file, a);
  } catch (const nlohmann::json::exception&) {
    return false;  // a report this blaster cannot read: judged again
  }
  return true;
}

baseline_timing baseline_timing_of(const bench_report& report) {
  baseline_timing t;
  t.bench_run_id = report.run_id;
  for (const variant_result& r : report.results) {
    if (!r.baseline) continue;
    if (r.status == "passed") t.time_us = r.time_us;
    t.bound = step_bound(r);
    if (r.profile && r.profile->diagnosis) t.diagnosis = r.profile->diagnosis->line;
    if (r.reason != reason_code::none) {
      t.message = fmt::format("the baseline was rejected: {}: {}", to_string(r.reason), r.message);
    }
    break;
  }
  if (!report.gpu) t.message = report.gpu_unavailable;
  return t;
}

std::optional<baseline_timing> bench_evaluator::time_baseline(std::int64_t session) {
  bench_options o = options_;
  o.baseline_only = true;
  o.profile_baseline = o.profile;  // its bound keys the memory until a step passes
  o.command = fmt::format("blaster bench --task {} --sessions {}{} (the baseline of run {})",
                          o.task, o.sessions, o.profile ? " --profile" : "", session);
  const bench_report report = run_bench(o, records_, &warm_);
  if (report.device) device_ = device_brief(report);
  return baseline_timing_of(report);
}

}  // namespace blaster
