#pragma once

#include <cstdint>

#include "benchmarking/report/bench_report.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {

class store;

// The run's record, one row per fact: the task and device it used; per variant its compilation,
// each check of the gate, its timing and its verdict; and what each variant came to, with every
// metric of the registry (variant_metrics) and their definitions. Objects go into the CAS before
// the rows that cite them. The results view and every report of the store read these rows.
void record_run(store& records, std::int64_t run_id, const task_spec& task,
                const bench_report& report);

}  // namespace blaster
