#include "benchmarking/measure_stage.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "benchmarking/correctness_gate.hpp"
#include "benchmarking/counter_stage.hpp"
#include "benchmarking/gate_data.hpp"
#include "benchmarking/gpu_lanes.hpp"
#include "benchmarking/sanitizer_pass.hpp"
#include "benchmarking/screening.hpp"
#include "core/parallel_for.hpp"
#include "evidence/store.hpp"

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

}  // namespace

void measure_stage(const bench_options& options, const task_spec& task, reference_fn reference,
                   const std::vector<worker_launcher>& launchers, store& records,
                   bench_report& report,
                   const std::vector<compiled_candidates::runnable_variant>& runnable,
                   warm_bench& kept) {
  std::deque<device_lock> turns;
  take_turns(launchers, turns);
  const worker_launcher& launcher = launchers.front();  // times every session of a verdict
  report.seeds = gate_seeds(report.seed);               // the series' seed: the same data every run
  if (!kept.data) {
    const phase_timer timer(report.phase_ms, "references");
    spdlog::info("computing inputs and float64 references for the gate");
    kept.data = std::make_unique<gate_data>(
        task, reference, report.seeds, launcher.dir,
        kept.cases.empty() ? std::vector<std::string>{report.timed_case} : kept.cases,
        launchers.size());
  }
  kept.data->time(report.timed_case);
  const gate_data& data = *kept.data;
  spdlog::info("{} checks over {} cases{}", data.checks().size(), task.cases.size(),
               launchers.size() > 1 ? fmt::format(" on {} GPUs", launchers.size()) : "");
  report.warnings = data.warnings();
  for (const auto& w : report.warnings) spdlog::warn("task design: {}", w);

  std::random_device entropy;
  const auto canary = static_cast<std::uint32_t>(entropy());
  const std::uint64_t poison_seed = (static_cast<std::uint64_t>(entropy()) << 32U) | entropy();
  std::optional<milliseconds> deadline = options.deadline;
  std::optional<std::filesystem::path> sanitizer;
  if (options.sanitize) {
    sanitizer = find_compute_sanitizer();
    report.sanitizer = sanitizer ? sanitizer->string()
                                 : std::string("none: compute-sanitizer is not installed here");
    if (!sanitizer) spdlog::warn("--sanitize: compute-sanitizer is not installed; skipped");
  }
  // Per runnable variant, the request that times it once it passed the gate.
  std::vector<std::optional<worker_request>> passed(runnable.size());
  std::vector<std::pair<std::size_t, worker_request>> to_gate;  // runnable index, its request
  for (std::size_t i = 0; i < runnable.size(); ++i) {
    const auto& p = runnable[i];
    variant_result& r = report.results[p.result];
    if (const auto* gated = kept.gated_as(r.label, r.source_sha256)) {
      // Gated by an earlier run of the series: the same source on the same data.
      r.gate_s = gated->gate.wall_s;
      r.gate_profile = gated->gate.profile;
      r.checks = gated->gate.checks;
      r.sanitizer = gated->sanitizer;
      r.gated_in_run = gated->run_id;
      passed[i] = gated->timing_request(report.timed_case, options.timing);
      if (!options.deadline && r.baseline) deadline = deadline_after(r.gate_s);
      continue;
    }
    to_gate.emplace_back(
        i, request_for(options, task, report, r, p.file->file, canary, poison_seed, entropy));
  }
  std::mutex keeping;  // the series' gated variants, which every lane adds to
  auto gate_one = [&](std::size_t i, worker_request request, std::size_t lane) {
    const worker_launcher& on = launchers[lane];
    const auto& p = runnable[i];
    variant_result& r = report.results[p.result];
    spdlog::info(
        "{}: gate ({} checks){}", r.label, data.checks().size(),
        launchers.size() > 1 ? fmt::format(" on GPU {}", kept.lanes[lane].gpu.ordinal) : "");
    const gate_outcome gate = run_gate(task, data, request, on, deadline.value_or(first_deadline));
    r.gate_s = gate.wall_s;
    r.gate_profile = gate.profile;
    r.checks = gate.checks;
    r.gated_on = lane_uuid(kept, lane);
    if (gate.reason != reason_code::none) {
      reject(r, gate.reason, gate.message);
      return;
    }
    // Its timing compares its launches with its own gated output, which the next variant's
    // gate overwrites in the shared file: kept for every case the series times.
    warm_bench::gated_variant gated{.source_sha256 = r.source_sha256,
                                    .gate = gate,
                                    .sanitizer = {},
                                    .request = request,
                                    .run_id = report.run_id,
                                    .outputs = {}};
    const auto cases = data.timed_cases();
    for (std::size_t k = 0; k < cases.size(); ++k) {
      const auto file =
          on.dir / fmt::format("timed-outputs-{}-{}-{}.bin", report.run_id, p.result, k);
      gated.outputs[cases[k]] = {file, data.keep_timed_outputs(file, cases[k], on.lane)};
    }
    request = gated.timing_request(report.timed_case, options.timing);
    if (sanitizer) {
      spdlog::info("{}: compute-sanitizer ({})", r.label, fmt::join(sanitizer_tools, ", "));
      // The tools slow kernels down tenfold and more.
      const milliseconds slow(std::max<long long>(10 * deadline.value_or(first_deadline).count(),
                                                  first_deadline.count()));
      const sanitizer_outcome sanitized = run_sanitizers(data, request, on, *sanitizer, slow);
      r.sanitizer = sanitized.reports;
      if (sanitized.reason != reason_code::none) {
        reject(r, sanitized.reason, sanitized.message);
        return;
      }
    }
    gated.sanitizer = r.sanitizer;
    {
      const std::lock_guard lock(keeping);
      kept.keep(r.label, std::move(gated));
    }
    passed[i] = std::move(request);
  };
  if (!to_gate.empty()) {
    const phase_timer timer(report.phase_ms, "gate");
    std::size_t first = 0;
    // The baseline first, alone: every other evaluation's deadline follows from its time.
    if (const variant_result& b = report.results[runnable[to_gate.front().first].result];
        b.baseline) {
      gate_one(to_gate.front().first, to_gate.front().second, 0);
      if (!options.deadline) deadline = deadline_after(b.gate_s);
      first = 1;
    }
    spread_over_lanes(to_gate.size() - first, launchers.size(),
                      [&](std::size_t k, std::size_t lane) {
                        gate_one(to_gate[first + k].first, to_gate[first + k].second, lane);
                      });
  }
  std::vector<std::pair<std::size_t, worker_request>> survivors;  // result index, request
  for (std::size_t i = 0; i < runnable.size(); ++i) {
    if (passed[i]) survivors.emplace_back(runnable[i].result, std::move(*passed[i]));
  }
  {
    std::set<std::string> labels;
    for (const auto& p : runnable) labels.insert(report.results[p.result].label);
    kept.keep_only(labels);
  }

  // The counters of every variant that passed, in workers of their own: after its timing, so
  // that they never share a process with a timed sample.
  auto profile_survivors = [&] {
    const phase_timer timer(report.phase_ms, "counters");
    profile_variants(data, survivors, launcher, deadline.value_or(first_deadline), options.ncu,
                     options.profile_baseline, records.cas(), report);
  };
  if (options.profile_only) {
    profile_survivors();
    for (const auto& [index, request] : survivors) {
      variant_result& r = report.results[index];
      if (r.status != "rejected") r.status = "profiled";
    }
    report.deadline_s = static_cast<double>(deadline.value_or(first_deadline).count()) / 1000.0;
    return;
  }

  // -1 stands for the baseline's second measurement, the A/A check.
  constexpr std::ptrdiff_t again = -1;
  std::vector<std::ptrdiff_t> order;
  for (std::size_t i = 0; i < survivors.size(); ++i)
    order.push_back(static_cast<std::ptrdiff_t>(i));
  const bool baseline_survived =
      !survivors.empty() && report.results[survivors.front().first].baseline;
  if (baseline_survived) order.push_back(again);
  const bool only_baseline_left = survivors.size() == 1 && baseline_survived;
  const bool only_baseline_given = report.results.size() == 1 && report.results[0].baseline;
  const int sessions = options.time_lone_baseline || !only_baseline_left || only_baseline_given
                           ? std::max(1, options.sessions)
                           : 0;
  bool timed_baseline = false;
  std::mutex recording;  // a variant's record, which the lanes timing the baseline share
  // Times survivor `entry` once on `lane` (`twin`: the baseline's A/A measurement); none where it
  // failed, which its record then says.
  auto time_one = [&](std::size_t entry, worker_request request, std::size_t lane,
                      bool twin = false) -> std::optional<timing_outcome> {
    variant_result& r = report.results[survivors[entry].first];
    const auto& ceilings = *kept.lanes[lane].probed->probe;
    timing_outcome timed =
        run_timing(data, std::move(request), launchers[lane], deadline.value_or(first_deadline),
                   ceilings.memory.copy.bytes_per_second);
    const std::lock_guard lock(recording);
    r.timing_s = std::max(r.timing_s, timed.wall_s);
    if (!twin && r.first_timing_s == 0.0) {
      r.first_timing_s = timed.wall_s;
      r.timing_profile = timed.profile;
    }
    if (timed.reason != reason_code::none) {
      reject(r, timed.reason, timed.message);
      return std::nullopt;
    }
    return timed;
  };
  // What a session's timing of a variant leaves on its record.
  auto record_timing = [&](variant_result& r, const timing_outcome& timed, std::size_t lane) {
    const std::lock_guard lock(recording);
    r.session_medians_us.push_back(timed.timing->median_us);
    r.max_noise = std::max(r.max_noise, timed.timing->noise);
    if (!r.timing) {  // the first session's samples go on record
      r.timing = timed.timing;
      r.poisoned = timed.poisoned;
      r.timed_on = lane_uuid(kept, lane);
    }
  };
  auto screening_request = [&](std::size_t entry) {
    worker_request request = survivors[entry].second;
    if (options.screen_budget_ms) {
      request.timing.budget_ms = std::min(request.timing.budget_ms, *options.screen_budget_ms);
    }
    return request;
  };
  std::size_t candidates = 0;
  for (const auto& survivor : survivors)
    candidates += report.results[survivor.first].baseline ? 0 : 1;
  const bool spread_screening = sessions > 0 && options.confirm_best > 0 && launchers.size() > 1 &&
                                baseline_survived &&
                                candidates > static_cast<std::size_t>(options.confirm_best);
  if (spread_screening) {
    const phase_timer timer(report.phase_ms, "screening");
    // Each GPU times the baseline first: a candidate's rank is its time over the baseline's on
    // the GPU that timed it, which holds for GPUs of one model whatever each one's clocks.
    std::vector<double> baseline_us(launchers.size(), 0.0);
    on_every_lane(launchers.size(), [&](std::size_t lane) {
      spdlog::info("screening: timing {} on GPU {}", report.results[survivors[0].first].label,
                   kept.lanes[lane].gpu.ordinal);
      if (const auto timed = time_one(0, screening_request(0), lane)) {
        baseline_us[lane] = timed->timing->median_us;
      }
    });
    if (report.results[survivors[0].first].status != "rejected") {
      if (!options.deadline) {  // the longest of the baseline's timings
        deadline = std::max(*deadline, deadline_after(report.results[survivors[0].first].timing_s));
      }
      std::vector<std::size_t> entries;  // the candidates, in survivors
      for (std::size_t e = 1; e < survivors.size(); ++e) entries.push_back(e);
      std::vector<double> rank(report.results.size(), 0.0);
      spread_over_lanes(entries.size(), launchers.size(), [&](std::size_t k, std::size_t lane) {
        const std::size_t entry = entries[k];
        variant_result& r = report.results[survivors[entry].first];
        spdlog::info("screening: timing {} on GPU {}", r.label, kept.lanes[lane].gpu.ordinal);
        if (const auto timed = time_one(entry, screening_request(entry), lane)) {
          record_timing(r, *timed, lane);
          rank[survivors[entry].first] = timed->timing->median_us / baseline_us[lane];
        }
      });
      std::vector<std::size_t> indices;
      for (const auto& survivor : survivors) indices.push_back(survivor.first);
      screen(options.confirm_best, report, indices, order,
             [&](std::size_t result) { return rank[result]; });
      // The confirmed ones start over on the first GPU: a verdict pairs sessions of one GPU.
      for (const auto entry : order) {
        if (entry < 0) continue;
        variant_result& r = report.results[survivors[static_cast<std::size_t>(entry)].first];
        r.session_medians_us.clear();
        r.timing.reset();
        r.poisoned.reset();
        r.max_noise = 0.0;
        r.timed_on.clear();
      }
    }
  }
  std::optional<phase_timer> timer;
  if (sessions > 0) timer.emplace(report.phase_ms, "timing");
  for (int session = 0; session < sessions; ++session) {
    if (session == 1 && options.confirm_best > 0 && !spread_screening) {
      std::vector<std::size_t> indices;
      for (const auto& survivor : survivors) indices.push_back(survivor.first);
      screen(options.confirm_best, report, indices, order);
    }
    std::vector<std::ptrdiff_t> this_session = order;
    if (session % 2 == 1) std::reverse(this_session.begin(), this_session.end());
    if (session > 0 && options.cooldown_s > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(options.cooldown_s));
    }
    for (std::ptrdiff_t entry : this_session) {
      const std::size_t at = entry == again ? 0 : static_cast<std::size_t>(entry);
      variant_result& r = report.results[survivors[at].first];
      if (r.status == "rejected") continue;
      spdlog::info("session {}: timing {}{}", session + 1, r.label, entry == again ? " (A/A)" : "");
      const bool screening = session == 0 && options.confirm_best > 0 && !spread_screening;
      const auto timed =
          time_one(at, screening ? screening_request(at) : survivors[at].second, 0, entry == again);
      if (!timed) continue;
      if (entry == again) {
        report.aa_medians_us.push_back(timed->timing->median_us);
        continue;
      }
      record_timing(r, *timed, 0);
      if (r.baseline && !timed_baseline && !options.deadline) {
        timed_baseline = true;
        deadline = std::max(*deadline, deadline_after(timed->wall_s));
      }
    }
  }
  timer.reset();
  for (const auto& [index, request] : survivors) {
    variant_result& r = report.results[index];
    if (r.status != "rejected" && !r.session_medians_us.empty()) r.status = "passed";
  }
  if (options.profile) profile_survivors();
  report.deadline_s = static_cast<double>(deadline.value_or(first_deadline).count()) / 1000.0;
}

}  // namespace blaster
