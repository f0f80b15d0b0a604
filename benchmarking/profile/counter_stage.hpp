#pragma once

// The profile of a variant that passed the gate: its hardware counters, collected in a worker of
// their own (never in a timed one), and with --ncu Nsight Compute's report of the same kernels
// on the same case. Diagnostics only: nothing here changes a verdict or a rank, and a profile
// that fails says why in place of its counters.

#include <chrono>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include "benchmarking/gate/gate_data.hpp"
#include "benchmarking/report/bench_report.hpp"
#include "benchmarking/worker/worker_launcher.hpp"

namespace blaster {

class cas_store;

// Where Nsight Compute is; none: --ncu says so and the run goes on.
std::optional<std::filesystem::path> find_ncu();

// The counters of `request`'s variant on the data's timed case; with `ncu`, also Nsight
// Compute's report, whose file goes into `cas`.
diagnostics profile_variant(const gate_data& data, worker_request request,
                            const worker_launcher& launcher, std::chrono::milliseconds deadline,
                            const std::optional<std::filesystem::path>& ncu, cas_store& cas);

// The counters of each variant of `survivors` ({index into report.results, its request}) that
// was neither rejected nor screened out (the baseline only with `baseline`), into its result;
// with `ncu`, Nsight Compute's report too, or why none came.
void profile_variants(const gate_data& data,
                      const std::vector<std::pair<std::size_t, worker_request>>& survivors,
                      const worker_launcher& launcher, std::chrono::milliseconds deadline, bool ncu,
                      bool baseline, cas_store& cas, bench_report& report);

// The one-line diagnosis of the variant's counters: against the task's minimal bytes, and its
// time (measured, or the counted kernel time where it was not timed) against the launch floor
// of the run's timing mode.
void diagnose_variant(const bench_report& report, variant_result& r);

}  // namespace blaster
