#include "benchmarking/runner/bench_runner.hpp"

#include <algorithm>
#include <chrono>
#include <random>

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "benchmarking/profile/counter_stage.hpp"
#include "benchmarking/report/run_record.hpp"
#include "benchmarking/runner/detail/compile_stage.hpp"
#include "benchmarking/runner/detail/measure_stage.hpp"
#include "benchmarking/runner/gpu_lanes.hpp"
#include "benchmarking/runner/warm_bench.hpp"
#include "benchmarking/statistics/statistics.hpp"
#include "benchmarking/worker/worker_launcher.hpp"
#include "core/compile_cache.hpp"
#include "core/cuda_driver.hpp"
#include "core/error.hpp"
#include "core/worker_process.hpp"
#include "evidence/store.hpp"
#include "tasks/drawn_cases.hpp"
#include "tasks/input_saturation.hpp"
#include "tasks/reference.hpp"

namespace blaster {
namespace {

using json = nlohmann::json;

std::string device_json(const bench_report& report) {
  json j = report.device ? to_json(*report.device) : json::object();
  j["nvrtc"] = report.nvrtc;
  j["blaster_revision"] = report.blaster_revision;
  if (report.memory) j["copy_bandwidth_gbs"] = report.memory->copy.bytes_per_second / 1e9;
  return j.dump();
}

// The bytes of the timed case and where they can live between launches.
roofline_traffic traffic_of(const bench_report& report, const variant_result& r) {
  return {.read_bytes = report.roofline_read_bytes,
          .written_bytes = report.roofline_write_bytes,
          .mix_known = report.roofline_mix_known,
          .footprint_bytes = report.footprint_bytes,
          .l2_bytes = report.device ? report.device->l2_bytes : 0,
          .l2_may_hold = traits_of(report.timing.mode).may_hold_l2,
          .buffer_copies = r.timing->buffer_copies};
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
  for (const auto& w : input_saturation_warnings(compiled.task)) spdlog::warn("task design: {}", w);
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
  // A drawn case to time ("drawn:SEED:k", from an earlier run's evidence) is rebuilt from its name.
  if (is_drawn_case_name(options.timed_case)) {
    add_drawn_cases_named(compiled.task, options.timed_case);
  }
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
  kept.join(fmt::format("{} cases '{}' {}{} gpus '{}'", task.name, fmt::join(kept.cases, ","),
                        options.root.string(), options.sanitize ? " sanitized" : "",
                        to_string(options.gpus)));
  if (!kept.seed) {
    std::random_device entropy;  // a seed no candidate can predict
    kept.seed = options.seed.value_or((static_cast<std::uint64_t>(entropy()) << 32U) | entropy());
  }
  report.seed = *kept.seed;
  // Beside the fixed cases, the gate checks shapes drawn from the task's ranges with the run's
  // seed: a kernel that hard-codes a shape or mishandles a boundary fails on them.
  add_drawn_cases(compiled.task, report.seed);
  if (!kept.scratch) kept.scratch.emplace(report.seed);
  const std::vector<worker_launcher> launchers = lane_launchers(
      options.gpus, options.compile_only,
      options.worker_executable.empty() ? this_executable() : options.worker_executable, kept);
  report.kept_worker = launchers.front().kept != nullptr;
  if (options.compile_only) {
    report.gpu = false;
    report.gpu_unavailable = "compile only: no GPU was looked for";
  } else {
    if (!kept.lanes.front().probed) {
      const phase_timer timer(report.phase_ms, "probe");
      probe_lanes(launchers, kept);
    }
    apply_lanes(kept, report);
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
      measure_stage(options, task, reference, launchers, records, report, compiled.runnable, kept);
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
  const std::string report_sha256 = records.cas().put(stored_report_bytes(report));
  records.finish_run(run_id,
                     report.gpu             ? "completed"
                     : options.compile_only ? "compiled"
                                            : "no_gpu",
                     report_sha256);
  return report;
}

}  // namespace blaster
