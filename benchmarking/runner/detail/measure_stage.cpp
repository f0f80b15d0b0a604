#include "benchmarking/runner/detail/measure_stage.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "benchmarking/gate/correctness_gate.hpp"
#include "benchmarking/gate/gate_data.hpp"
#include "benchmarking/gate/sanitizer_pass.hpp"
#include "benchmarking/profile/counter_stage.hpp"
#include "benchmarking/runner/detail/screening.hpp"
#include "benchmarking/runner/gpu_lanes.hpp"
#include "core/parallel_for.hpp"
#include "evidence/store.hpp"
#include "tasks/input_saturation.hpp"

namespace blaster {
namespace {

using std::chrono::milliseconds;

// The request every worker of one variant starts from.
worker_request request_for(const bench_options& options, const task_spec& task,
                           const bench_report& report, const variant_result& r,
                           const std::filesystem::path& file, std::uint32_t canary,
                           std::uint64_t poison_seed, std::random_device& entropy) {
  worker_request request;
  request.root = options.root;
  request.home = report.home;
  request.task = task.name;
  request.candidate_file = file;
  request.source_sha256 = r.source_sha256;
  request.variant = r.label;
  request.arch = report.arch;
  request.canary_pattern = canary;
  request.poison_seed = poison_seed;
  request.timing = options.timing;
  request.spot_seed = (static_cast<std::uint64_t>(entropy()) << 32U) | entropy();
  request.compile = options.compile;
  request.counted_runs = options.counted_runs;
  return request;
}

// A few seconds beyond what the baseline needed.
milliseconds deadline_after(double needed_s) {
  return milliseconds(static_cast<long long>((2.0 * needed_s + 5.0) * 1000.0));
}

// One bench's measurement: the gate of every variant spread over the lanes, an optional
// screening session spread over them, then the sessions on the first lane.
class measurement {
 public:
  measurement(const bench_options& options, const task_spec& task,
              const std::vector<worker_launcher>& launchers, store& records, bench_report& report,
              warm_bench& kept)
      : options_(options),
        task_(task),
        launchers_(launchers),
        records_(records),
        report_(report),
        kept_(kept),
        data_(*kept.data),
        deadline_(options.deadline) {}

  // Gates every runnable variant: those an earlier run of the series gated are taken as they
  // were; the baseline goes first, alone; the others spread over the lanes.
  void gate(const std::vector<compiled_candidates::runnable_variant>& runnable);
  // The counters of every variant that passed, in workers of their own: after its timing, so
  // that they never share a process with a timed sample.
  void profile();
  // Times the survivors in sessions on the first lane (after a screening session spread over
  // the lanes, where there are several and a screening to do).
  void time();
  void finish() { report_.deadline_s = static_cast<double>(deadline().count()) / 1000.0; }

 private:
  // -1 in an order stands for the baseline's second measurement, the A/A check.
  static constexpr std::ptrdiff_t again = -1;

  [[nodiscard]] milliseconds deadline() const { return deadline_.value_or(first_deadline); }
  void gate_one(const compiled_candidates::runnable_variant& p, std::size_t i,
                worker_request request, std::size_t lane);
  // Times survivor `entry` once on `lane` (`twin`: the baseline's A/A measurement); none where
  // it failed, which its record then says.
  std::optional<timing_outcome> time_one(std::size_t entry, worker_request request,
                                         std::size_t lane, bool twin = false);
  // What a session's timing of a variant leaves on its record.
  void record(variant_result& r, const timing_outcome& timed, std::size_t lane);
  // The survivor's request with the screening's budget.
  [[nodiscard]] worker_request screening_request(std::size_t entry) const;
  // The screening session spread over the lanes; whether there was one to do.
  bool screen_on_lanes(std::vector<std::ptrdiff_t>& order);
  // The indices into report.results of the survivors.
  [[nodiscard]] std::vector<std::size_t> survivor_results() const;
  // Whether the screening keeps a result whatever its rank: a configuration of always_confirm.
  [[nodiscard]] std::function<bool(std::size_t)> always_confirmed() const {
    return [this](std::size_t result) {
      const variant_result& r = report_.results[result];
      return !r.baseline &&
             std::find(options_.always_confirm.begin(), options_.always_confirm.end(), r.params) !=
                 options_.always_confirm.end();
    };
  }
  // Whether the baseline passed the gate: it is then the first survivor.
  [[nodiscard]] bool baseline_survived() const {
    return !survivors_.empty() && report_.results[survivors_.front().first].baseline;
  }

  const bench_options& options_;
  const task_spec& task_;
  const std::vector<worker_launcher>& launchers_;
  store& records_;
  bench_report& report_;
  warm_bench& kept_;
  const gate_data& data_;
  std::optional<milliseconds> deadline_;
  std::optional<std::filesystem::path> sanitizer_;
  std::vector<std::optional<worker_request>> passed_;  // per runnable variant: its timing's
  std::vector<std::pair<std::size_t, worker_request>> survivors_;  // result index, request
  std::mutex keeping_;    // the series' gated variants, which every lane adds to
  std::mutex recording_;  // a variant's record, which the lanes timing the baseline share
};

void measurement::gate(const std::vector<compiled_candidates::runnable_variant>& runnable) {
  if (options_.sanitize) {
    sanitizer_ = find_compute_sanitizer();
    report_.sanitizer = sanitizer_ ? sanitizer_->string()
                                   : std::string("none: compute-sanitizer is not installed here");
    if (!sanitizer_) spdlog::warn("--sanitize: compute-sanitizer is not installed; skipped");
  }
  std::random_device entropy;
  const auto canary = static_cast<std::uint32_t>(entropy());
  const std::uint64_t poison_seed = (static_cast<std::uint64_t>(entropy()) << 32U) | entropy();
  passed_.assign(runnable.size(), std::nullopt);
  std::vector<std::pair<std::size_t, worker_request>> to_gate;  // runnable index, its request
  for (std::size_t i = 0; i < runnable.size(); ++i) {
    const auto& p = runnable[i];
    variant_result& r = report_.results[p.result];
    if (const auto* gated = kept_.gated_as(r.label, r.source_sha256)) {
      // Gated by an earlier run of the series: the same source on the same data.
      r.gate_s = gated->gate.wall_s;
      r.gate_profile = gated->gate.profile;
      r.checks = gated->gate.checks;
      r.sanitizer = gated->sanitizer;
      r.sanitizer_s = gated->sanitizer_s;
      r.gated_in_run = gated->run_id;
      passed_[i] = gated->timing_request(report_.timed_case, options_.timing);
      if (!options_.deadline && r.baseline) deadline_ = deadline_after(r.gate_s);
      continue;
    }
    to_gate.emplace_back(
        i, request_for(options_, task_, report_, r, p.file->file, canary, poison_seed, entropy));
  }
  if (!to_gate.empty()) {
    const phase_timer timer(report_.phase_ms, "gate");
    std::size_t first = 0;
    // The baseline first, alone: every other evaluation's deadline follows from its time.
    if (const variant_result& b = report_.results[runnable[to_gate.front().first].result];
        b.baseline) {
      gate_one(runnable[to_gate.front().first], to_gate.front().first, to_gate.front().second, 0);
      if (!options_.deadline) deadline_ = deadline_after(b.gate_s);
      first = 1;
    }
    spread_over_lanes(to_gate.size() - first, launchers_.size(),
                      [&](std::size_t k, std::size_t lane) {
                        const auto& [i, request] = to_gate[first + k];
                        gate_one(runnable[i], i, request, lane);
                      });
  }
  for (std::size_t i = 0; i < runnable.size(); ++i) {
    if (passed_[i]) survivors_.emplace_back(runnable[i].result, std::move(*passed_[i]));
  }
  std::set<std::string> labels;
  for (const auto& p : runnable) labels.insert(report_.results[p.result].label);
  kept_.keep_only(labels);
}

void measurement::gate_one(const compiled_candidates::runnable_variant& p, std::size_t i,
                           worker_request request, std::size_t lane) {
  const worker_launcher& on = launchers_[lane];
  variant_result& r = report_.results[p.result];
  spdlog::info(
      "{}: gate ({} checks){}", r.label, data_.checks().size(),
      launchers_.size() > 1 ? fmt::format(" on GPU {}", kept_.lanes[lane].gpu.ordinal) : "");
  const gate_outcome gate = run_gate(task_, data_, request, on, deadline());
  r.gate_s = gate.wall_s;
  r.gate_profile = gate.profile;
  r.checks = gate.checks;
  r.gated_on = lane_uuid(kept_, lane);
  if (gate.reason != reason_code::none) {
    reject(r, gate.reason, gate.message);
    return;
  }
  // Its timing compares its launches with its own gated output, which the next variant's gate
  // overwrites in the lane's file: kept for every case the series times.
  warm_bench::gated_variant gated{.source_sha256 = r.source_sha256,
                                  .gate = gate,
                                  .sanitizer = {},
                                  .sanitizer_s = 0.0,
                                  .request = request,
                                  .run_id = report_.run_id,
                                  .outputs = {},
                                  .other_draws_sha256 = {}};
  const auto cases = data_.timed_cases();
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const auto file =
        on.dir / fmt::format("timed-outputs-{}-{}-{}.bin", report_.run_id, p.result, k);
    gated.outputs[cases[k]] = {file, data_.keep_timed_outputs(file, cases[k], on.lane)};
    gated.other_draws_sha256[cases[k]] = data_.other_draws_sha256(cases[k], on.lane);
  }
  request = gated.timing_request(report_.timed_case, options_.timing);
  if (sanitizer_) {
    spdlog::info("{}: compute-sanitizer ({})", r.label, fmt::join(sanitizer_tools, ", "));
    // The tools slow kernels down tenfold and more.
    const milliseconds slow(std::max<long long>(10 * deadline().count(), first_deadline.count()));
    const sanitizer_outcome sanitized = run_sanitizers(data_, request, on, *sanitizer_, slow);
    r.sanitizer = sanitized.reports;
    r.sanitizer_s = sanitized.wall_s;
    if (sanitized.reason != reason_code::none) {
      reject(r, sanitized.reason, sanitized.message);
      return;
    }
  }
  gated.sanitizer = r.sanitizer;
  gated.sanitizer_s = r.sanitizer_s;
  {
    const std::lock_guard lock(keeping_);
    kept_.keep(r.label, std::move(gated));
  }
  passed_[i] = std::move(request);
}

void measurement::profile() {
  const phase_timer timer(report_.phase_ms, "counters");
  profile_variants(data_, survivors_, launchers_.front(), deadline(), options_.ncu,
                   options_.profile_baseline, records_.cas(), report_);
  if (!options_.profile_only) return;
  for (const auto& [index, request] : survivors_) {
    variant_result& r = report_.results[index];
    if (r.status != "rejected") r.status = "profiled";
  }
}

std::optional<timing_outcome> measurement::time_one(std::size_t entry, worker_request request,
                                                    std::size_t lane, bool twin) {
  variant_result& r = report_.results[survivors_[entry].first];
  // The baseline's first timing sets the deadline of the rest; until then the deadline is its
  // gate's, which the timing's own checks (the other draws uploaded again and again) outgrow on
  // a large case. The baseline is the task's own kernel: it gets the first deadline.
  const milliseconds limit = r.baseline && r.first_timing_s == 0.0 && !options_.deadline
                                 ? std::max(deadline(), first_deadline)
                                 : deadline();
  timing_outcome timed = run_timing(data_, std::move(request), launchers_[lane], limit);
  const std::lock_guard lock(recording_);
  r.timing_s = std::max(r.timing_s, timed.wall_s);
  if (!twin && r.first_timing_s == 0.0) {
    r.first_timing_s = timed.wall_s;
    r.timing_profile = timed.profile;
  }
  if (timed.reason != reason_code::none) {
    spdlog::info("{}: rejected, {}: {}", r.label, to_string(timed.reason), timed.message);
    reject(r, timed.reason, timed.message);
    // The launches that rejected it, on record.
    if (timed.poisoned) r.poisoned = timed.poisoned;
    if (timed.unseen) r.unseen = timed.unseen;
    return std::nullopt;
  }
  return timed;
}

void measurement::record(variant_result& r, const timing_outcome& timed, std::size_t lane) {
  const std::lock_guard lock(recording_);
  r.session_medians_us.push_back(timed.timing->median_us);
  r.max_noise = std::max(r.max_noise, timed.timing->noise);
  if (!r.timing) {  // the first session's samples go on record
    r.timing = timed.timing;
    r.poisoned = timed.poisoned;
    r.unseen = timed.unseen;
    r.timed_on = lane_uuid(kept_, lane);
  }
}

worker_request measurement::screening_request(std::size_t entry) const {
  worker_request request = survivors_[entry].second;
  if (options_.screen_budget_ms) {
    request.timing.budget_ms = std::min(request.timing.budget_ms, *options_.screen_budget_ms);
  }
  return request;
}

std::vector<std::size_t> measurement::survivor_results() const {
  std::vector<std::size_t> indices;
  for (const auto& survivor : survivors_) indices.push_back(survivor.first);
  return indices;
}

bool measurement::screen_on_lanes(std::vector<std::ptrdiff_t>& order) {
  if (launchers_.size() < 2 || options_.confirm_best <= 0 || !baseline_survived() ||
      survivors_.size() - 1 <= static_cast<std::size_t>(options_.confirm_best)) {
    return false;
  }
  const phase_timer timer(report_.phase_ms, "screening");
  variant_result& baseline = report_.results[survivors_.front().first];
  // Each GPU times the baseline first: a candidate's rank is its time over the baseline's on the
  // GPU that timed it, which holds for GPUs of one model whatever each one's clocks.
  std::vector<double> baseline_us(launchers_.size(), 0.0);
  on_every_lane(launchers_.size(), [&](std::size_t lane) {
    spdlog::info("screening: timing {} on GPU {}", baseline.label, kept_.lanes[lane].gpu.ordinal);
    if (const auto timed = time_one(0, screening_request(0), lane)) {
      baseline_us[lane] = timed->timing->median_us;
    }
  });
  if (baseline.status == "rejected") return true;  // no rank without it: every candidate goes on
  if (!options_.deadline) {                        // the longest of the baseline's timings
    deadline_ = std::max(deadline(), deadline_after(baseline.timing_s));
  }
  std::vector<double> rank(report_.results.size(), 0.0);
  spread_over_lanes(survivors_.size() - 1, launchers_.size(), [&](std::size_t k, std::size_t lane) {
    const std::size_t entry = k + 1;  // the candidates follow the baseline
    variant_result& r = report_.results[survivors_[entry].first];
    spdlog::info("screening: timing {} on GPU {}", r.label, kept_.lanes[lane].gpu.ordinal);
    if (const auto timed = time_one(entry, screening_request(entry), lane)) {
      record(r, *timed, lane);
      rank[survivors_[entry].first] = timed->timing->median_us / baseline_us[lane];
    }
  });
  screen(
      options_.confirm_best, report_, survivor_results(), order,
      [&](std::size_t result) { return rank[result]; }, always_confirmed());
  // The confirmed ones start over on the first GPU: a verdict pairs sessions of one GPU.
  for (const auto entry : order) {
    if (entry == again) continue;
    variant_result& r = report_.results[survivors_[static_cast<std::size_t>(entry)].first];
    r.session_medians_us.clear();
    r.timing.reset();
    r.poisoned.reset();
    r.unseen.reset();
    r.max_noise = 0.0;
    r.timed_on.clear();
  }
  return true;
}

void measurement::time() {
  std::vector<std::ptrdiff_t> order;
  for (std::size_t i = 0; i < survivors_.size(); ++i)
    order.push_back(static_cast<std::ptrdiff_t>(i));
  if (baseline_survived()) order.push_back(again);
  const bool only_baseline_left = survivors_.size() == 1 && baseline_survived();
  const bool only_baseline_given = report_.results.size() == 1 && report_.results[0].baseline;
  const int sessions = options_.time_lone_baseline || !only_baseline_left || only_baseline_given
                           ? std::max(1, options_.sessions)
                           : 0;
  if (sessions == 0) return;
  const bool screened = screen_on_lanes(order);
  // Without a screening of its own, the first session screens.
  const bool screening = options_.confirm_best > 0 && !screened;
  const phase_timer timer(report_.phase_ms, "timing");
  bool timed_baseline = false;
  for (int session = 0; session < sessions; ++session) {
    if (session == 1 && screening)
      screen(options_.confirm_best, report_, survivor_results(), order, {}, always_confirmed());
    std::vector<std::ptrdiff_t> this_session = order;
    if (session % 2 == 1) std::reverse(this_session.begin(), this_session.end());
    if (session > 0 && options_.cooldown_s > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(options_.cooldown_s));
    }
    for (const std::ptrdiff_t entry : this_session) {
      const std::size_t at = entry == again ? 0 : static_cast<std::size_t>(entry);
      variant_result& r = report_.results[survivors_[at].first];
      if (r.status == "rejected") continue;
      spdlog::info("session {}: timing {}{}", session + 1, r.label, entry == again ? " (A/A)" : "");
      const auto timed =
          time_one(at, session == 0 && screening ? screening_request(at) : survivors_[at].second, 0,
                   entry == again);
      if (!timed) continue;
      if (entry == again) {
        report_.aa_medians_us.push_back(timed->timing->median_us);
        continue;
      }
      record(r, *timed, 0);
      if (r.baseline && !timed_baseline && !options_.deadline) {
        timed_baseline = true;
        deadline_ = std::max(deadline(), deadline_after(timed->wall_s));
      }
    }
  }
  for (const auto& [index, request] : survivors_) {
    variant_result& r = report_.results[index];
    if (r.status != "rejected" && !r.session_medians_us.empty()) r.status = "passed";
  }
}

}  // namespace

void measure_stage(const bench_options& options, const task_spec& task, reference_fn reference,
                   const std::vector<worker_launcher>& launchers, store& records,
                   bench_report& report,
                   const std::vector<compiled_candidates::runnable_variant>& runnable,
                   warm_bench& kept) {
  std::deque<device_lock> turns;
  take_turns(launchers, turns);
  report.seeds = gate_seeds(report.seed);  // the series' seed: the same data every run
  if (!kept.data) {
    const phase_timer timer(report.phase_ms, "references");
    spdlog::info("computing inputs and float64 references for the gate");
    kept.data = std::make_unique<gate_data>(
        task, reference, report.seeds, launchers.front().dir,
        kept.cases.empty() ? std::vector<std::string>{report.timed_case} : kept.cases,
        launchers.size());
  }
  kept.data->time(report.timed_case);
  spdlog::info("{} checks over {} cases{}", kept.data->checks().size(), task.cases.size(),
               launchers.size() > 1 ? fmt::format(" on {} GPUs", launchers.size()) : "");
  report.warnings = input_saturation_warnings(task);
  for (const auto& w : kept.data->warnings()) report.warnings.push_back(w);
  for (const auto& w : report.warnings) spdlog::warn("task design: {}", w);

  measurement m(options, task, launchers, records, report, kept);
  m.gate(runnable);
  if (options.profile_only) {
    m.profile();
  } else {
    m.time();
    if (options.profile) m.profile();
  }
  m.finish();
}

}  // namespace blaster
