#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarking/gate/correctness_gate.hpp"
#include "benchmarking/gate/reason_code.hpp"

namespace blaster {

// The tools of compute-sanitizer that a variant's gate runs under with --sanitize: out-of-bounds
// and misaligned accesses, shared-memory races, reads of memory nothing wrote, and barriers
// that not every thread reaches.
inline const std::vector<std::string> sanitizer_tools = {"memcheck", "racecheck", "initcheck",
                                                         "synccheck"};

// compute-sanitizer beside the CUDA toolkit ($CUDA_HOME, /usr/local/cuda) or on the PATH.
std::optional<std::filesystem::path> find_compute_sanitizer();

// What one tool said about one variant.
struct sanitizer_report {
  std::string tool;
  int errors = 0;
  std::string first_error;  // the first line of its first report, without the ===== prefix
  std::string log;          // the head of its log
  std::string failure;      // the worker did not finish under it: why (not a rejection)
  double wall_s = 0.0;      // [s] the worker's run under the tool, its start included
};

struct sanitizer_outcome {
  reason_code reason = reason_code::none;
  std::string message;                    // the evidence, one line
  std::vector<sanitizer_report> reports;  // in the order of sanitizer_tools
  double wall_s = 0.0;                    // [seconds] the tools side by side, start to end
};

// The checks a sanitizer pass runs: the first seed of every case of at most `most_bytes` of
// buffers, once each. Large cases would take minutes under racecheck and prove no more.
std::vector<gate_check> sanitizer_checks(const std::vector<gate_check>& checks,
                                         std::size_t most_bytes);

// Runs the variant's small checks under each tool in a worker of its own, the tools side by side
// (most of a tool's time is its own start and the host's analysis, not the GPU's); the first tool
// of sanitizer_tools that reports an error rejects the variant with sanitizer_error and its first
// report as evidence. The tools run after the gate passed and before timing; each worker gets
// `deadline` times the number of tools, since they share the GPU.
sanitizer_outcome run_sanitizers(const gate_data& data, worker_request request,
                                 const worker_launcher& launcher,
                                 const std::filesystem::path& sanitizer,
                                 std::chrono::milliseconds deadline);

// Parses a compute-sanitizer log: its error count and first error line.
sanitizer_report parse_sanitizer_log(const std::string& tool, const std::string& log);

nlohmann::json to_json(const sanitizer_report& r);
sanitizer_report sanitizer_report_from_json(const nlohmann::json& j);

}  // namespace blaster
