#pragma once

// The result model of a bench run: what every variant's compile, gate, timing, verdict and
// roofline produced, and the run's device, ceilings and protocol. It is the single source of
// truth: the worker's answers are parsed into it, the store's rows are written from it, and
// every renderer and the portfolio read it. Each type has exactly one JSON form.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarking/ceilings/launch_floor.hpp"
#include "benchmarking/ceilings/matrix_rate.hpp"
#include "benchmarking/ceilings/memory_ceilings.hpp"
#include "benchmarking/ceilings/roofline.hpp"
#include "benchmarking/gate/gate_result.hpp"
#include "benchmarking/gate/reason_code.hpp"
#include "benchmarking/gate/sanitizer_pass.hpp"
#include "benchmarking/statistics/verdict.hpp"
#include "benchmarking/timing/kernel_timer.hpp"
#include "benchmarking/timing/timing_result.hpp"
#include "benchmarking/tuned/tuned_table.hpp"
#include "benchmarking/worker/step_profile.hpp"
#include "core/cuda_context.hpp"
#include "profiling/counter_profile.hpp"
#include "profiling/diagnosis.hpp"
#include "profiling/resource_report.hpp"

namespace blaster {

// What hardware counters say about a variant: diagnostics beside its measurement, never used to
// rank it or judge it.
struct diagnostics {
  counter_profile counters;  // CUPTI's, kernel by kernel
  // Bandwidth-, latency-, compute- or launch-bound, and why; none where no counters came.
  std::optional<counter_diagnosis> diagnosis;
  // With --ncu: Nsight Compute's report of the same kernels on the same case, in the CAS, and
  // the counters it holds; or why there is none.
  std::string ncu_report_sha256;
  std::optional<counter_profile> ncu;
  std::string ncu_unavailable;
  step_profile profile_ms;  // where the counter worker's wall time went, by its steps
};

// Everything blaster learned about one variant of one candidate.
struct variant_result {
  std::string candidate;
  std::string label;
  std::string file;
  std::map<std::string, std::string> params;
  // Where a tuned table chose these params for the timed case: the candidate's other
  // configurations were not run.
  std::optional<tuned_choice> tuned;
  bool baseline = false;
  // "passed" (correct, timed), "rejected" (reason says why), "compiled" (no GPU to go further).
  std::string status;
  reason_code reason = reason_code::none;
  std::string message;  // the evidence, one line

  // The compile.
  std::string log;  // NVRTC's log
  double compile_ms = 0.0;
  bool cache_hit = false;
  std::vector<kernel_resources> resources;
  std::string source_sha256;
  std::string sources_sha256;  // the source and the kernels/common headers it includes
  std::string cubin_sha256;

  // The gate.
  std::vector<case_check> checks;
  std::vector<sanitizer_report> sanitizer;  // with --sanitize: each tool's report
  double sanitizer_s = 0.0;  // [seconds] the tools' pass, side by side (each tool: its report)
  double gate_s = 0.0;       // [seconds] the gate worker's wall time
  step_profile gate_profile;
  // The earlier run of a series (tune's cases, a portfolio's task) whose gate this is: the same
  // source on the same data, gated once; none where this run gated it.
  std::optional<std::int64_t> gated_in_run;
  // Where a run had several GPUs (--gpus): the UUID of the one that gated it, and of the one
  // its time is from (a screened-out variant's screening session may have run on another than
  // the sessions that confirm).
  std::string gated_on;
  std::string timed_on;

  // The timing: the first session's samples and checks, then every session's median.
  std::optional<timing_samples> timing;
  std::optional<poisoned_launches> poisoned;  // the first session's, where the mode checks it
  std::optional<unseen_inputs> unseen;        // the first session's, where the case has others
  std::string samples_sha256;
  double timing_s = 0.0;        // [seconds] the longest timing worker's wall time
  double first_timing_s = 0.0;  // [seconds] the first session's timing worker
  step_profile timing_profile;
  std::vector<double> session_medians_us;  // [microseconds] one per session, in order
  std::optional<double> time_us;           // [microseconds] the median of the session medians
  double session_spread = 0.0;             // max/min - 1 of the session medians
  double max_noise = 0.0;                  // the noisiest session's relative noise
  bool launch_bound = false;               // within launch_bound_factor of the mode's floor
  bool screened = false;  // timed in the first session only: slower than the confirmed ones

  // The verdict against the baseline, session by session, and the speedup of the same run.
  std::optional<verdict_result> verdict;
  std::optional<double> speedup;  // baseline time over this time

  // The roofline: the task's bytes and flops over the time, against the measured ceilings, and
  // the least time those bytes take at the ceilings of their mix and of where the data lives.
  std::optional<double> bandwidth_gbs;       // roofline bytes over time [GB/s]
  std::optional<double> copy_bandwidth_pct;  // bandwidth_gbs against the copy ceiling [%]
  std::optional<double> flops_per_second;    // the task's flops over the time
  std::optional<double> matrix_rate_pct;     // flops_per_second against the matrix rate [%]
  std::optional<roofline_floor> floor;
  std::optional<double> time_over_floor;

  std::optional<diagnostics> profile;  // hardware counters, where they were collected
};

struct bench_report {
  std::string task;
  std::string title;
  std::string timed_case;   // the task's canonical case unless --case names another
  std::string timed_shape;  // "B=16 C=64 H=256 W=256"
  std::string dtype;        // task_spec::data_dtype(), e.g. "f16"
  std::int64_t roofline_bytes = 0;
  std::int64_t roofline_read_bytes = 0;   // the task's read_bytes, or roofline_bytes unstated
  std::int64_t roofline_write_bytes = 0;  // 0 where the task does not state the mix
  bool roofline_mix_known = false;
  std::int64_t footprint_bytes = 0;  // [bytes] every buffer of the timed case
  std::int64_t roofline_flops = 0;
  std::string arch;
  std::string nvrtc;
  std::string blaster_revision;  // the harness's source revision, core/revision.hpp
  std::uint64_t seed = 0;
  std::vector<std::uint64_t> seeds;   // every case is checked with each
  std::vector<std::string> warnings;  // task-design guards
  // Candidate files of kernels/<task>/ this run left out, not compiled or judged, one line per
  // reason: this machine cannot compile their kind (discover_candidates).
  std::vector<std::string> left_out;
  double deadline_s = 0.0;            // [seconds] per evaluation, after the baseline
  // Gate and timing ran in a worker process (and its CUDA context) kept across a loop's steps,
  // not in a process per evaluation.
  bool kept_worker = false;
  timing_options timing;
  bool gpu = false;
  std::string gpu_unavailable;  // why correctness and timing did not run
  bool sanitize = false;        // --sanitize was asked for
  std::string sanitizer;        // the compute-sanitizer that ran, or why none did
  std::optional<cuda::device_properties> device;
  std::optional<memory_ceilings> memory;
  std::optional<matrix_rate> matrix;
  std::optional<launch_floors> floors;
  // Every GPU of a run that had several (--gpus), the first the device above, which times every
  // session that a verdict compares; empty: the device alone.
  std::vector<cuda::device_properties> gpus;
  int sessions = 1;
  std::uint64_t bootstrap_seed = 0;
  std::vector<double> aa_medians_us;  // [microseconds] the baseline's second measurement
  std::optional<aa_check> aa;
  std::vector<variant_result> results;
  std::int64_t run_id = 0;
  std::string home;
  double wall_ms = 0.0;
  // [milliseconds] where the wall time went: probe, compile, references, gate, timing, counters
  // (what a warm series reuses is absent from its later runs).
  step_profile phase_ms;
};

nlohmann::json to_json(const diagnostics& d);
diagnostics diagnostics_from_json(const nlohmann::json& j);
nlohmann::json to_json(const variant_result& r);
variant_result variant_result_from_json(const nlohmann::json& j);
// A variant's time where it passed and was confirmed, not screened out after the first session:
// the time a tuned table's entry states.
std::optional<double> confirmed_time(const variant_result& r);
// The run's baseline result (the task's init.cu), or none where the run had none.
const variant_result* baseline_result(const bench_report& report);
// Everything in the report, exactly: what `--json` prints and what the store keeps. Reading
// accepts the reports of the previous release too (checked-in bundles hold them): what they
// lack reads as absent.
nlohmann::json to_json(const bench_report& report);
bench_report bench_report_from_json(const nlohmann::json& j);
// The report as the store keeps it (runs.report_sha256, a bundle's results.json): compact JSON,
// since a portfolio's bundle carries one per case.
std::string stored_report_bytes(const bench_report& report);

}  // namespace blaster
