#pragma once

// What the harness asks of a worker process, and the lines the worker answers with. The
// parent writes a request file and starts `blaster __worker REQUEST`; the worker writes JSON
// lines on its result channel: {"step": ...} as it goes, so that a crash leaves evidence of
// where, and one {"result": ...} at the end. Large data never crosses the channel: inputs and
// outputs live in two mapped files whose layout the request gives.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarking/ceilings/launch_floor.hpp"
#include "benchmarking/ceilings/matrix_rate.hpp"
#include "benchmarking/ceilings/memory_ceilings.hpp"
#include "benchmarking/timing/kernel_timer.hpp"
#include "core/compile_sandbox.hpp"
#include "core/cuda_context.hpp"

namespace blaster {

// A buffer's bytes in one of the mapped files.
struct buffer_slot {
  std::string buffer;
  std::size_t offset = 0;  // [bytes]
  std::size_t bytes = 0;
  std::string sha256;  // inputs: the digest of what is uploaded, computed once per run
};

// One case with one seed: what the worker uploads, runs and hands back.
struct gate_check {
  std::string case_name;
  std::uint64_t seed = 0;
  bool repeat = false;               // run it determinism_runs times and compare bit for bit
  std::vector<buffer_slot> inputs;   // in the inputs file
  std::vector<buffer_slot> outputs;  // in the outputs file
};

enum class worker_phase {
  probe,    // the device's properties and memory ceilings
  gate,     // every check, outputs into the outputs file
  time,     // the timing of one check's inputs, and the stale-output checks
  locate,   // one check again, its guards mapped: where a fault of the gate wrote
  profile,  // the hardware counters of one check's inputs, kernel by kernel, replayed
  devices,  // every GPU the worker sees, for --gpus to choose from
};

struct worker_request {
  worker_phase phase = worker_phase::gate;
  std::filesystem::path root;  // holds tasks/ and kernels/
  std::filesystem::path home;  // the store: the compile cache and the CAS
  std::string task;
  std::filesystem::path candidate_file;
  std::string source_sha256;  // the source the parent compiled; the worker refuses any other
  std::string variant;        // the label of the params configuration
  std::string arch;
  std::vector<gate_check> checks;
  std::filesystem::path inputs_file;
  std::filesystem::path outputs_file;
  // Time phase: outputs_file holds only the timed check's outputs, as this variant's gate left
  // them, starting at this offset of the gate's layout; of the timed case's other checks, the
  // digest (piecewise_sha256_hex) of each output as the gate left it, by check.
  std::size_t outputs_base = 0;
  std::map<std::size_t, std::vector<std::string>> other_draws_sha256;
  int determinism_runs = 5;
  std::uint32_t canary_pattern = 0;  // drawn per run: a kernel cannot know what to write back
  std::uint64_t poison_seed = 0;     // drawn per run: the outputs' poison_pattern
  std::size_t canary_bytes = 4096;   // [bytes] before and after every buffer
  // [bytes] unmapped address space on each side of every buffer's canaries; the locate phase
  // maps it as canaries instead.
  std::size_t guard_bytes = std::size_t{64} << 20U;
  std::size_t timed_check = 0;  // time, locate, profile: the check whose inputs they use
  timing_options timing;
  std::uint64_t spot_seed = 0;  // time phase: picks the timed sample whose output is checked
  // Profile phase: a profiler around the worker (Nsight Compute) counts the plan's kernels
  // itself and reruns the whole worker once per pass; each run launches the plan counted_runs
  // times, each on restored inputs and poisoned outputs, between the same sweeps as CUPTI's count.
  bool wrapped_profiler = false;
  // Profile phase: counts of the whole plan, each counter their median. A memory-bound kernel's
  // stall ratios differ by up to a tenth between two counts, under Nsight Compute as here
  // (lg_throttle of rmsnorm_vec_regs: 1.07 and 1.17); the median of five narrows that, and one
  // far-off count does not move it.
  int counted_runs = 5;
  // The parent's limits: the worker reloads the variant under the same ones, so that a limit a
  // flag raised does not reject there what the parent accepted.
  compile_limits compile;
};

// What the probe reports, as the worker sends it and the report keeps it.
nlohmann::json to_json(const cuda::device_properties& device);
cuda::device_properties device_properties_from_json(const nlohmann::json& j);
nlohmann::json to_json(const bandwidth_ceiling& ceiling);
bandwidth_ceiling bandwidth_ceiling_from_json(const nlohmann::json& j);
nlohmann::json to_json(const memory_ceilings& ceilings);
memory_ceilings memory_ceilings_from_json(const nlohmann::json& j);
nlohmann::json to_json(const matrix_rate& rate);
matrix_rate matrix_rate_from_json(const nlohmann::json& j);
nlohmann::json to_json(const launch_floors& floors);
launch_floors launch_floors_from_json(const nlohmann::json& j);

nlohmann::json to_json(const timing_options& options);
timing_options timing_options_from_json(const nlohmann::json& j);

nlohmann::json to_json(const worker_request& request);
worker_request worker_request_from_json(const nlohmann::json& j);

std::string_view to_string(worker_phase phase);

}  // namespace blaster
