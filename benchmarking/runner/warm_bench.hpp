#pragma once

#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "benchmarking/gate/correctness_gate.hpp"
#include "benchmarking/gate/gate_data.hpp"
#include "benchmarking/gate/sanitizer_pass.hpp"
#include "benchmarking/report/bench_report.hpp"
#include "benchmarking/runner/gpu_choice.hpp"
#include "benchmarking/worker/worker_result.hpp"
#include "core/worker_process.hpp"

namespace blaster {

// A folder for a run's shared inputs and outputs, removed with the object.
class scratch_folder {
 public:
  explicit scratch_folder(std::uint64_t seed);
  ~scratch_folder();
  scratch_folder(const scratch_folder&) = delete;
  scratch_folder& operator=(const scratch_folder&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// What the probe found: the device, its ceilings and launch floors, or why there is no GPU.
struct probed_device {
  std::optional<device_probe> probe;
  std::string unavailable;

  void apply_to(bench_report& report) const;
};

// What a series of bench runs of one task keeps from its first run, so that each later run
// costs only what is new in it: its GPUs, with their facts and ceilings, the gate's inputs and
// float64 references, the gate of every variant that passed it, and (with a kept worker) one
// worker process per GPU that gates and times every variant in one CUDA context. A crash or a
// timeout ends that worker, as do a candidate that used the device heap and its share of
// evaluations (kept_worker_evaluations); the next evaluation starts another. The runs must agree on
// task, root and GPUs and time one of the series' cases, each in its own mode; the first one's
// seed serves them all, so that every run checks the same data. run_bench alone fills it in.
struct warm_bench {
  explicit warm_bench(bool keep) : keep_worker(keep) {}
  warm_bench(const warm_bench&) = delete;
  warm_bench& operator=(const warm_bench&) = delete;

  // Names the series at its first run; a later run of another series is a harness error.
  void join(const std::string& what);
  // The kept worker of lane `lane`, started at its first use; none unless keep_worker.
  persistent_worker* kept_worker(std::size_t lane, const std::filesystem::path& executable);
  // How many worker processes the kept workers have started so far (0 without one).
  [[nodiscard]] int workers_started() const;

  // One GPU of the series, with its probe and its kept worker. The first lane times every
  // session that a verdict compares; with --gpus the others gate and screen beside it.
  struct lane {
    gpu_lane gpu;  // gpu.visible empty: this process's device 0, no --gpus
    std::optional<probed_device> probed;
    std::optional<persistent_worker> worker;
  };

  // A variant that passed the series' gate: a later run with the same label and source times it
  // on the same data without gating it again.
  struct gated_variant {
    std::string source_sha256;
    gate_outcome gate;
    std::vector<sanitizer_report> sanitizer;
    double sanitizer_s = 0.0;  // [seconds] its tools' pass
    worker_request request;    // its timing's, less the case and the timing options
    std::int64_t run_id = 0;   // the run that gated it
    // Per timed case, the file of the outputs its gate left and their offset in the gate's layout,
    // and the digests of its outputs on the case's other draws (gate_data::other_draws_sha256).
    std::map<std::string, std::pair<std::filesystem::path, std::size_t>> outputs;
    std::map<std::string, std::map<std::size_t, std::vector<std::string>>> other_draws_sha256;

    // The request that times it on `case_name`, one of the series' cases, with `timing`.
    [[nodiscard]] worker_request timing_request(const std::string& case_name,
                                                const timing_options& timing) const;
  };
  // The variant gated as `label` from `source_sha256`, if the series has gated it.
  [[nodiscard]] const gated_variant* gated_as(const std::string& label,
                                              const std::string& source_sha256) const;
  // Keeps a variant that passed the gate, in place of an earlier one of that label.
  void keep(const std::string& label, gated_variant passed);
  // Forgets every gated variant but those labelled in `labels`, and their outputs files: what a
  // series keeps is what its latest run ran, so that a loop's earlier candidates do not pile up.
  void keep_only(const std::set<std::string>& labels);

  bool keep_worker = false;
  // The cases the series times, set before its first run; none: the first run's case alone.
  std::vector<std::string> cases;
  std::string series;  // what the runs must agree on
  std::optional<std::uint64_t> seed;
  // In this order, so that the workers stop before the folder they read goes.
  std::optional<scratch_folder> scratch;
  std::deque<lane> lanes;  // chosen at the first run
  std::unique_ptr<gate_data> data;
  std::map<std::string, gated_variant> gated;  // by label
};

}  // namespace blaster
