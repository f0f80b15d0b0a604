#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

// The rows of the store's fuller schema (version 2), as the runner hands them over. Every
// *_sha256 member names an object the caller has already put in the CAS (the store refuses a row
// that cites a missing object); an empty one is NULL. *_json members hold JSON text (empty: NULL).
// Members default to empty so that designated initializers may name only what they set.
namespace blaster {

// What a number was measured on. Two fingerprints with the same fields are one row.
struct device_fingerprint {
  std::string name{};                // "NVIDIA H200"
  std::string uuid{};                // "GPU-..."
  std::string compute_capability{};  // "9.0"
  std::string arch{};                // "sm_90a"
  std::optional<std::int64_t> sm_count{};
  std::optional<std::int64_t> sm_clock_khz{};
  std::optional<std::int64_t> memory_clock_khz{};
  std::optional<std::int64_t> memory_bus_width_bits{};
  std::optional<std::int64_t> total_memory_bytes{};
  std::optional<std::int64_t> l2_bytes{};
  std::string driver_version{};  // "13.0"
  std::string cuda_version{};    // of the toolkit blaster was built with
  std::string nvrtc_version{};
};

struct task_case_record {
  std::string name{};
  bool canonical = false;
  std::string shape{};         // "B=16 C=64 H=256 W=256"
  std::string symbols_json{};  // {"B": 16, ...}
};

// A task as it was when it ran: task.json's bytes are the CAS object spec_sha256, so an edited
// task is a new row.
struct task_record {
  std::string name{};
  std::string title{};
  std::string spec_sha256{};
  std::vector<task_case_record> cases{};
};

// What the compiler or the driver said about one kernel; nullopt where neither said.
struct kernel_resource_record {
  std::string kernel{};  // lowered name
  std::optional<std::int64_t> registers{};
  std::optional<std::int64_t> stack_bytes{};
  std::optional<std::int64_t> spill_store_bytes{};
  std::optional<std::int64_t> spill_load_bytes{};
  std::optional<std::int64_t> shared_bytes{};
  std::optional<std::int64_t> barriers{};
};

// One NVRTC compilation of one variant; successful or not.
struct compilation_record {
  std::string candidate{};
  std::string variant{};
  std::string file_name{};      // the candidate's file, as given
  std::string source_sha256{};  // required
  std::string arch{};           // required, "sm_90a"
  std::vector<std::string> options{};
  std::string nvrtc_version{};
  bool succeeded = false;
  std::string log_sha256{};
  std::string cubin_sha256{};
  std::optional<double> compile_ms{};
  bool cache_hit = false;
  std::vector<kernel_resource_record> kernels{};
};

// The correctness gate's finding for one compilation on one case and seed.
struct gate_result_record {
  std::string case_name{};
  std::uint64_t seed = 0;
  bool passed = false;
  std::string reason{};  // empty when passed; else compile_error, wrong_result, ...
  std::string message{};
  std::optional<double> max_abs_error{};
  std::optional<double> max_rel_error{};
  std::optional<std::int64_t> mismatches{};
  std::optional<std::int64_t> nonfinite{};
  std::optional<std::int64_t> unwritten{};
  std::string metrics_json{};     // percentiles of the normalized error, the worst elements, ...
  std::string evidence_sha256{};  // e.g. the outputs that failed
};

// One timing of one compilation on one case: the raw samples live in the CAS.
struct measurement_record {
  std::string case_name{};
  std::string mode{};            // hot, cold, graph
  std::string protocol_json{};   // required: how the samples were taken
  std::string samples_sha256{};  // required
  std::int64_t sample_count = 0;
  double median_us = 0.0;  // [microseconds per launch]
  std::optional<double> mean_us{};
  std::optional<double> min_us{};
  std::optional<double> max_us{};
  std::optional<double> stdrel{};  // relative standard deviation
  std::string statistics_json{};
};

// What the run concluded about one measurement against the baseline's.
struct verdict_record {
  std::int64_t measurement_id = 0;
  std::optional<std::int64_t> baseline_measurement_id{};
  std::string verdict{};  // improved, no_improvement, inconclusive, baseline
  std::optional<double> speedup{};
  std::optional<double> speedup_ci_low{};  // paired bootstrap 95% interval
  std::optional<double> speedup_ci_high{};
  std::string detail_json{};
};

// What one variant of a run came to: the per-variant row of the record, citing its compilation
// (none: the file was refused before it compiled) and its measurement (none: it was not timed),
// with its quantities by their metric's tag.
// What the counters of a variant said (variant_diagnostics).
struct diagnosis_record {
  std::string bound{};        // "bandwidth-bound", ...; empty where no counters came
  std::string diagnosis{};    // the one line
  std::string unavailable{};  // why no counters came
  std::string profile_sha256{};     // the counters, kernel by kernel, as JSON
  std::string ncu_report_sha256{};  // Nsight Compute's .ncu-rep, with --ncu
};

struct variant_result_record {
  std::optional<std::int64_t> compilation_id{};
  std::optional<std::int64_t> measurement_id{};
  std::string candidate{};
  std::string variant{};
  std::string file_name{};
  bool baseline = false;
  std::string case_name{};  // the timed case
  std::string status{};     // passed, rejected, compiled
  std::string reason{};     // empty when passed
  std::string message{};
  std::string params_json{};
  // Only what no compilation or measurement of the row cites: a refused file's source, the
  // samples of a variant rejected after it was timed.
  std::string source_sha256{};
  std::string cubin_sha256{};
  std::string samples_sha256{};
  std::string detail_json{};
  std::vector<std::pair<std::string, double>> metrics{};
  std::optional<diagnosis_record> diagnostics{};
};

// Any other file a run produced (a figure, a profile, a log), by name.
struct artifact_record {
  std::string kind{};  // "figure", "profile", ...
  std::string name{};  // unique within the run, e.g. "speedup.svg"
  std::string sha256{};
  std::string media_type{};  // "image/svg+xml"
};

}  // namespace blaster
