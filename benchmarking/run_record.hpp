#pragma once

#include <cstdint>

#include "benchmarking/bench_runner.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {

class store;

// One results row per variant: what `blaster runs` and `show` list.
void record_results(store& records, std::int64_t run_id, const bench_report& report);

// The fuller record of schema version 2: the task and device the run used, and per variant its
// compilation, each check of the gate, its timing and its verdict. Objects go into the CAS
// before the rows that cite them.
void record_evidence(store& records, std::int64_t run_id, const task_spec& task,
                     const bench_report& report);

}  // namespace blaster
