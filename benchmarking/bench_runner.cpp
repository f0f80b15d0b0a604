#include "benchmarking/bench_runner.hpp"

#include <algorithm>
#include <chrono>
#include <random>
#include <set>
#include <thread>

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "benchmarking/compile_stage.hpp"
#include "benchmarking/correctness_gate.hpp"
#include "benchmarking/counter_stage.hpp"
#include "benchmarking/gate_data.hpp"
#include "benchmarking/run_record.hpp"
#include "benchmarking/screening.hpp"
#include "benchmarking/statistics.hpp"
#include "benchmarking/warm_bench.hpp"
#include "benchmarking/worker_launcher.hpp"
#include "core/compile_cache.hpp"
#include "core/cuda_driver.hpp"
#include "core/device_lock.hpp"
#include "core/error.hpp"
#include "core/worker_process.hpp"
#include "evidence/store.hpp"
#include "tasks/reference.hpp"

namespace blaster {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;

// The first evaluations, the probe and the baseline, get this long: nothing is known yet of
// what the task needs.
constexpr milliseconds first_deadline{120'000};

// This process's turn on its GPU: another blaster process that wants it waits.
device_lock gpu_turn() {
  return device_lock(visible_device(), [](const std::string& m) { spdlog::info("{}", m); });
}

// Asks a worker what GPU there is and how fast it copies. The parent itself never touches the
// driver: a process that has initialized CUDA passes a broken state to what it forks.
probed_device probe(const worker_launcher& launcher) {
  const device_lock gpu = gpu_turn();  // the ceilings it measures are this run's alone
  worker_request request;
  request.phase = worker_phase::probe;
  const worker_answer answer = launcher.run(request, first_deadline);
  probed_device found;
  if (!answer.result) {
    found.unavailable = "the GPU probe failed: " + answer.why;
  } else if (answer.result->unavailable) {
    found.unavailable = *answer.result->unavailable;
  } else if (answer.result->failure) {
    found.unavailable = "the GPU probe failed: " + answer.result->failure->message;
  } else if (!answer.result->probe) {
    found.unavailable = "the GPU probe failed: it answered without a probe";
  } else {
    found.probe = answer.result->probe;
  }
  return found;
}

std::string device_json(const bench_report& report) {
  json j = report.device ? to_json(*report.device) : json::object();
  j["nvrtc"] = report.nvrtc;
  j["blaster_revision"] = report.blaster_revision;
  if (report.memory) j["copy_bandwidth_gbs"] = report.memory->copy.bytes_per_second / 1e9;
  return j.dump();
}

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

// Gates every runnable variant in its own evaluation, then times the survivors in sessions: each
// session one evaluation per variant (a fresh worker each, or the series' kept worker), in
// alternating order (forward, then backward) so that drift over a run falls on baseline and
// candidates alike, and the baseline timed a second time at the session's other end for the A/A
// self-check.
void measure(const bench_options& options, const task_spec& task, reference_fn reference,
             const worker_launcher& launcher, store& records, bench_report& report,
             const std::vector<compiled_candidates::runnable_variant>& runnable, warm_bench& kept) {
  const device_lock gpu = gpu_turn();
  report.seeds = gate_seeds(report.seed);  // the series' seed: the same data every run
  if (!kept.data) {
    const phase_timer timer(report.phase_ms, "references");
    spdlog::info("computing inputs and float64 references for the gate");
    kept.data = std::make_unique<gate_data>(
        task, reference, report.seeds, launcher.dir,
        kept.cases.empty() ? std::vector<std::string>{report.timed_case} : kept.cases);
  }
  kept.data->time(report.timed_case);
  const gate_data& data = *kept.data;
  spdlog::info("{} checks over {} cases", data.checks().size(), task.cases.size());
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
  std::vector<std::pair<std::size_t, worker_request>> survivors;  // result index, request
  for (const auto& p : runnable) {
    variant_result& r = report.results[p.result];
    if (const auto* gated = kept.gated_as(r.label, r.source_sha256)) {
      // Gated by an earlier run of the series: the same source on the same data.
      r.gate_s = gated->gate.wall_s;
      r.gate_profile = gated->gate.profile;
      r.checks = gated->gate.checks;
      r.sanitizer = gated->sanitizer;
      r.gated_in_run = gated->run_id;
      survivors.emplace_back(p.result, gated->timing_request(report.timed_case, options.timing));
      if (!options.deadline && r.baseline) deadline = deadline_after(r.gate_s);
      continue;
    }
    const phase_timer timer(report.phase_ms, "gate");
    worker_request request =
        request_for(options, task, report, r, p.file->file, canary, poison_seed, entropy);
    spdlog::info("{}: gate ({} checks)", r.label, data.checks().size());
    const gate_outcome gate =
        run_gate(task, data, request, launcher, deadline.value_or(first_deadline));
    r.gate_s = gate.wall_s;
    r.gate_profile = gate.profile;
    r.checks = gate.checks;
    if (gate.reason != reason_code::none) {
      reject(r, gate.reason, gate.message);
    } else {
      // Its timing compares its launches with its own gated output, which the next variant's
      // gate overwrites in the shared file: kept for every case the series times.
      warm_bench::gated_variant passed{.source_sha256 = r.source_sha256,
                                       .gate = gate,
                                       .sanitizer = {},
                                       .request = request,
                                       .run_id = report.run_id,
                                       .outputs = {}};
      const auto cases = data.timed_cases();
      for (std::size_t k = 0; k < cases.size(); ++k) {
        const auto file =
            launcher.dir / fmt::format("timed-outputs-{}-{}-{}.bin", report.run_id, p.result, k);
        passed.outputs[cases[k]] = {file, data.keep_timed_outputs(file, cases[k])};
      }
      request = passed.timing_request(report.timed_case, options.timing);
      std::optional<sanitizer_outcome> sanitized;
      if (sanitizer) {
        spdlog::info("{}: compute-sanitizer ({})", r.label, fmt::join(sanitizer_tools, ", "));
        // The tools slow kernels down tenfold and more.
        const milliseconds slow(std::max<long long>(10 * deadline.value_or(first_deadline).count(),
                                                    first_deadline.count()));
        sanitized = run_sanitizers(data, request, launcher, *sanitizer, slow);
        r.sanitizer = sanitized->reports;
      }
      if (sanitized && sanitized->reason != reason_code::none) {
        reject(r, sanitized->reason, sanitized->message);
      } else {
        passed.sanitizer = r.sanitizer;
        kept.keep(r.label, std::move(passed));
        survivors.emplace_back(p.result, std::move(request));
      }
    }
    if (!options.deadline && r.baseline) deadline = deadline_after(r.gate_s);
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
  std::optional<phase_timer> timer;
  if (sessions > 0) timer.emplace(report.phase_ms, "timing");
  for (int session = 0; session < sessions; ++session) {
    if (session == 1 && options.confirm_best > 0) {
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
      const auto& [index, request] =
          survivors[entry == again ? 0 : static_cast<std::size_t>(entry)];
      variant_result& r = report.results[index];
      if (r.status == "rejected") continue;
      spdlog::info("session {}: timing {}{}", session + 1, r.label, entry == again ? " (A/A)" : "");
      worker_request timed_request = request;
      if (session == 0 && options.confirm_best > 0 && options.screen_budget_ms) {
        timed_request.timing.budget_ms =
            std::min(timed_request.timing.budget_ms, *options.screen_budget_ms);
      }
      const timing_outcome timed =
          run_timing(data, std::move(timed_request), launcher, deadline.value_or(first_deadline),
                     report.memory->copy.bytes_per_second);
      r.timing_s = std::max(r.timing_s, timed.wall_s);
      if (entry != again && r.first_timing_s == 0.0) {
        r.first_timing_s = timed.wall_s;
        r.timing_profile = timed.profile;
      }
      if (timed.reason != reason_code::none) {
        reject(r, timed.reason, timed.message);
        continue;
      }
      if (entry == again) {
        report.aa_medians_us.push_back(timed.timing->median_us);
        continue;
      }
      r.session_medians_us.push_back(timed.timing->median_us);
      r.max_noise = std::max(r.max_noise, timed.timing->noise);
      if (!r.timing) {  // the first session's samples go on record
        r.timing = timed.timing;
        r.poisoned = timed.poisoned;
      }
      if (r.baseline && !timed_baseline && !options.deadline) {
        timed_baseline = true;
        deadline = std::max(*deadline, deadline_after(timed.wall_s));
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

// The bytes of the timed case and where they can live between launches.
roofline_traffic traffic_of(const bench_report& report, const variant_result& r) {
  return {.read_bytes = report.roofline_read_bytes,
          .written_bytes = report.roofline_write_bytes,
          .mix_known = report.roofline_mix_known,
          .footprint_bytes = report.footprint_bytes,
          .l2_bytes = report.device ? report.device->l2_bytes : 0,
          .l2_may_hold = traits_of(report.timing.mode).may_hold_l2 && r.timing->buffer_copies == 1};
}

void summarize(store& records, const bench_options& options, bench_report& report) {
  // Every time against its floor first: a time that the work cannot explain is not a result,
  // and a baseline that is not a result has nothing to compare with.
  for (auto& r : report.results) {
    if (r.status != "passed") continue;
    r.time_us = median(r.session_medians_us);
    r.session_spread = spread(r.session_medians_us);
    r.floor = memory_floor(*report.memory, traffic_of(report, r));
    r.time_over_floor = *r.time_us / r.floor->floor_us;
    if (auto why = impossible_speed(*r.floor, *report.memory, *r.time_us,
                                    r.max_noise + r.session_spread)) {
      reject(r, reason_code::impossible_speed, *why);
    }
  }
  const variant_result* baseline = nullptr;
  for (const auto& r : report.results) {
    if (r.baseline && r.status == "passed") baseline = &r;
  }
  report.sessions = std::max(1, options.sessions);
  report.bootstrap_seed = report.seed;
  if (baseline != nullptr && report.aa_medians_us.size() == baseline->session_medians_us.size() &&
      !report.aa_medians_us.empty()) {
    report.aa = self_check(baseline->session_medians_us, report.aa_medians_us);
  }
  for (auto& r : report.results) {
    if (!r.time_us) continue;
    const double seconds = *r.time_us * 1e-6;
    r.bandwidth_gbs = static_cast<double>(report.roofline_bytes) / seconds / 1e9;
    r.copy_bandwidth_pct = 100.0 * static_cast<double>(report.roofline_bytes) / seconds /
                           report.memory->copy.bytes_per_second;
    r.flops_per_second = static_cast<double>(report.roofline_flops) / seconds;
    if (report.matrix) {
      r.matrix_rate_pct = 100.0 * *r.flops_per_second / report.matrix->flops_per_second;
    }
    json samples = {{"mode", to_string(r.timing->mode)},
                    {"inner", r.timing->inner},
                    {"source", r.timing->source},
                    {"sample_us", r.timing->sample_us},
                    {"session_medians_us", r.session_medians_us},
                    {"case", report.timed_case},
                    {"shape", report.timed_shape}};
    if (!r.timing->event_us.empty()) samples["event_us"] = r.timing->event_us;
    r.samples_sha256 = records.cas().put(samples.dump());
    if (r.status != "passed") continue;
    if (report.floors) {
      const double floor = report.floors->us[report.timing.mode];
      r.launch_bound = *r.time_us < launch_bound_factor * floor;
    }
    if (baseline != nullptr) {
      r.speedup = *baseline->time_us / *r.time_us;
      if (&r != baseline && r.session_medians_us.size() == baseline->session_medians_us.size()) {
        r.verdict = judge(session_comparison{.baseline_medians = baseline->session_medians_us,
                                             .candidate_medians = r.session_medians_us,
                                             .seed = report.bootstrap_seed});
      }
    }
  }
  // The counters against the time: after it is known.
  for (auto& r : report.results) diagnose_variant(report, r);
}

}  // namespace

bench_report compile_task(const bench_options& options, store& records) {
  bench_report report;
  report.arch = options.arch.empty() ? "sm_90a" : options.arch;
  compiled_candidates compiled{
      .task = load_task(options.root, options.task), .loaded = {}, .runnable = {}};
  compile_cache cache(records.home() / "cache", records.cas());
  // A GPU of the target architecture can report what the compiler's log may leave out.
  std::optional<cuda::context> context;
  if (cuda::driver_unavailable_reason().empty()) {
    context.emplace(0);
    if (context->properties().arch() != report.arch) context.reset();
  }
  compile_stage(options, records, cache, context.has_value(), report, compiled);
  return report;
}

bench_report run_bench(const bench_options& given, store& records, warm_bench* warm) {
  const auto started = std::chrono::steady_clock::now();
  compiled_candidates compiled{
      .task = load_task(given.root, given.task), .loaded = {}, .runnable = {}};
  const task_spec& task = compiled.task;
  bench_options options = given;
  if (!options.mode_given) {
    // The mode the timed case or the task's goals are stated in: what is launch-bound says graph.
    const task_case& timed =
        task.find_case(options.timed_case.empty() ? task.canonical_case : options.timed_case);
    if (const auto mode = timed.timing_mode ? timed.timing_mode : task.timing_mode) {
      options.timing.mode = *mode;
    }
  }
  const reference_fn reference = find_reference(task.reference);

  bench_report report;
  report.timing = options.timing;
  report.sanitize = options.sanitize;
  report.home = records.home().string();
  warm_bench cold(/*keep_worker=*/false);
  warm_bench& kept = warm != nullptr ? *warm : cold;
  // The gate's data and verdicts serve every run of the series: they must agree on what a gate is.
  kept.join(fmt::format("{} cases '{}' {}{}", task.name, fmt::join(kept.cases, ","),
                        options.root.string(), options.sanitize ? " sanitized" : ""));
  if (!kept.seed) {
    std::random_device entropy;  // a seed no candidate can predict
    kept.seed = options.seed.value_or((static_cast<std::uint64_t>(entropy()) << 32U) | entropy());
  }
  report.seed = *kept.seed;
  if (!kept.scratch) kept.scratch.emplace(report.seed);
  worker_launcher launcher{.executable = options.worker_executable.empty()
                                             ? this_executable()
                                             : options.worker_executable,
                           .dir = kept.scratch->path()};
  launcher.kept = kept.kept_worker(launcher.executable);
  report.kept_worker = launcher.kept != nullptr;
  if (options.compile_only) {
    report.gpu = false;
    report.gpu_unavailable = "compile only: no GPU was looked for";
  } else {
    if (!kept.probed) {
      const phase_timer timer(report.phase_ms, "probe");
      kept.probed = probe(launcher);
    }
    kept.probed->apply_to(report);
  }
  report.arch = !options.arch.empty() ? options.arch
                : report.device       ? report.device->arch()
                                      : "sm_90a";
  // The run is on record from its first compile, so that one killed while compiling is found
  // and marked interrupted when the store is next opened.
  const std::int64_t run_id = records.begin_run(options.command, task.name, device_json(report));
  report.run_id = run_id;
  compile_cache cache(records.home() / "cache", records.cas());
  try {
    {
      const phase_timer timer(report.phase_ms, "compile");
      compile_stage(options, records, cache, /*device_present=*/false, report, compiled);
    }
    if (report.device) {
      // Every case the gate checks, and the timed one, must fit before anything is allocated.
      for (const auto& c : task.cases) {
        if (!c.large || c.name == report.timed_case) {
          task.check_fits(c, report.device->total_memory_bytes);
        }
      }
    }
    if (report.gpu) {
      measure(options, task, reference, launcher, records, report, compiled.runnable, kept);
      summarize(records, options, report);
    }
  } catch (...) {
    // What was learned before the failure is kept; the run says it failed.
    try {
      record_run(records, run_id, task, report);
    } catch (const std::exception& e) {
      spdlog::warn("the record of failed run {} is incomplete: {}", run_id, e.what());
    }
    records.finish_run(run_id, "failed", "");
    throw;
  }
  record_run(records, run_id, task, report);
  report.wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  const std::string report_sha256 = records.cas().put(to_json(report).dump(1));
  records.finish_run(run_id,
                     report.gpu             ? "completed"
                     : options.compile_only ? "compiled"
                                            : "no_gpu",
                     report_sha256);
  return report;
}

}  // namespace blaster
