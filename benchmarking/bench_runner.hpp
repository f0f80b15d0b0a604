#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarking/correctness_gate.hpp"
#include "benchmarking/kernel_timer.hpp"
#include "benchmarking/launch_floor.hpp"
#include "benchmarking/matrix_rate.hpp"
#include "benchmarking/memory_ceilings.hpp"
#include "benchmarking/output_dependence.hpp"
#include "benchmarking/roofline.hpp"
#include "benchmarking/sanitizer_pass.hpp"
#include "benchmarking/verdict.hpp"
#include "core/compile_sandbox.hpp"
#include "core/cuda_context.hpp"
#include "profiling/resource_report.hpp"

namespace blaster {

class store;

struct bench_options {
  std::filesystem::path root;  // holds tasks/ and kernels/
  std::string task;
  // Files or folders of candidates; empty: kernels/<task>/. The task's init.cu, the baseline,
  // always comes first unless skip_baseline is set (for `blaster compile --candidate F`).
  std::vector<std::filesystem::path> candidates;
  bool skip_baseline = false;
  std::string arch;                   // empty: the GPU's, or sm_90a without one
  std::optional<std::uint64_t> seed;  // none: drawn at run time
  timing_options timing;
  bool mode_given = false;  // false: the task's timing mode when it names one, else timing.mode
  std::string timed_case;   // empty: the task's canonical case
  std::string command;      // as the user typed it, for the record
  // The blaster executable that runs each evaluation in a child process; empty: this one.
  std::filesystem::path worker_executable;
  // The compile sandbox's deadline and memory cap, and the limits on sources, launches and
  // params combinations (--compile-timeout, --compile-memory, --max-source-bytes, --max-launches,
  // --max-variants). Its executable, when empty, is worker_executable's.
  compile_limits compile;
  // Per evaluation (gate or timing); none: a few seconds beyond what the baseline needed.
  std::optional<std::chrono::milliseconds> deadline;
  // Timing sessions: each a fresh process per variant, in alternating order.
  int sessions = 1;
  double cooldown_s = 1.0;  // [seconds] between two sessions
  // 0: every variant is timed in every session. N: after the first session only the baseline
  // and the N fastest candidates go on; the others are reported as screened out.
  int confirm_best = 0;
  // Runs the gate's small cases of every variant that passed it under compute-sanitizer's
  // memcheck, racecheck, initcheck and synccheck, where it is installed.
  bool sanitize = false;
};

// Everything blaster learned about one variant of one candidate: the structured verdict that a
// table, a JSON document, the store or an optimization loop reads.
struct variant_result {
  std::string candidate;
  std::string label;
  std::string file;
  std::map<std::string, std::string> params;
  bool baseline = false;
  // "passed" (correct, timed), "rejected" (reason says why), "compiled" (no GPU to go further).
  std::string status;
  reason_code reason = reason_code::none;
  std::string message;  // the evidence, one line
  std::string log;      // NVRTC's log
  double compile_ms = 0.0;
  bool cache_hit = false;
  std::vector<kernel_resources> resources;
  std::vector<case_check> checks;
  std::vector<sanitizer_report> sanitizer;  // with --sanitize: each tool's report
  double gate_s = 0.0;                      // [seconds] the gate worker's wall time
  double timing_s = 0.0;                    // [seconds] the longest timing worker's wall time
  double first_timing_s = 0.0;              // [seconds] the first session's timing worker
  // [milliseconds] by worker step: where the gate's and the first timing's wall time went.
  nlohmann::json gate_profile = nlohmann::json::object();
  nlohmann::json timing_profile = nlohmann::json::object();
  std::optional<timing_samples> timing;    // the first session's samples
  std::vector<double> session_medians_us;  // [microseconds] one per session, in order
  std::optional<double> time_us;           // [microseconds] the median of the session medians
  double spread = 0.0;                     // max/min - 1 of the session medians
  double max_noise = 0.0;                  // the noisiest session's relative noise
  bool launch_bound = false;               // within launch_bound_factor of the mode's floor
  bool screened = false;  // timed in the first session only: slower than the confirmed ones
  std::optional<verdict_result> verdict;   // against the baseline, session by session
  std::optional<double> speedup;           // baseline time over this time, same run
  std::optional<double> bandwidth_gbs;     // roofline bytes over time [GB/s]
  std::optional<double> roofline_pct;      // the roofline floor over the time [%]
  std::optional<double> flops_per_second;  // the task's flops over the time
  std::optional<double> matrix_rate_pct;   // flops_per_second against the measured matrix rate
  // The least time the roofline bytes take at the ceilings of their mix and of where the data
  // lives (DRAM, L2), and the time over it.
  std::optional<roofline_floor> floor;
  std::optional<double> time_over_floor;
  std::optional<poisoned_launches> poisoned;  // the first session's, hot and graph mode
  std::string source_sha256;
  std::string sources_sha256;  // the source and the kernels/common headers it includes
  std::string cubin_sha256;
  std::string samples_sha256;
};

struct bench_report {
  std::string task;
  std::string title;
  std::string timed_case;   // the task's canonical case unless --case names another
  std::string timed_shape;  // "B=16 C=64 H=256 W=256"
  std::string dtype;        // of the first input, e.g. "f16"
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
  double deadline_s = 0.0;            // [seconds] per evaluation, after the baseline
  timing_options timing;
  bool gpu = false;
  std::string gpu_unavailable;  // why correctness and timing did not run
  bool sanitize = false;        // --sanitize was asked for
  std::string sanitizer;        // the compute-sanitizer that ran, or why none did
  std::optional<cuda::device_properties> device;
  std::optional<memory_ceilings> memory;
  std::optional<matrix_rate> matrix;
  std::optional<launch_floors> floors;
  int sessions = 1;
  std::uint64_t bootstrap_seed = 0;
  std::vector<double> aa_medians_us;  // [microseconds] the baseline's second measurement
  std::optional<aa_check> aa;
  std::vector<variant_result> results;
  std::int64_t run_id = 0;
  std::string home;
  double wall_ms = 0.0;
};

// Compiles every candidate, checks each variant on every case against the float64 reference,
// times the survivors on the timed case, and records the run in the store. Problems with the
// task itself are input_errors; problems with a candidate are verdicts in its result.
bench_report run_bench(const bench_options& options, store& records);

// The screening between a bench's first session and the others: `order` holds indices into
// `survivors` (which holds indices into report.results), -1 for the baseline's A/A twin. Keeps
// the baseline, the twin, rejected entries and the `best` candidates fastest in their first
// session, in order; marks the others screened.
void screen(int best, bench_report& report, const std::vector<std::size_t>& survivors,
            std::vector<std::ptrdiff_t>& order);

// Only the compile stage of run_bench, for any architecture and with no GPU: what
// `blaster compile` shows. Nothing is recorded as a run.
bench_report compile_task(const bench_options& options, store& records);

}  // namespace blaster
