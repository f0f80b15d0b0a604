#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "benchmarking/candidate/candidate.hpp"
#include "benchmarking/report/bench_report.hpp"
#include "benchmarking/runner/bench_runner.hpp"
#include "core/compile_cache.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {

class store;

// What compiling the candidates produced: the report so far and the variants that can run.
struct compiled_candidates {
  task_spec task;
  std::vector<candidate_file> loaded;
  struct runnable_variant {
    const candidate_file* file;
    const candidate_variant* variant;
    std::size_t result;  // index into report.results
  };
  std::vector<runnable_variant> runnable;
};

// Loads the task, compiles every candidate for the report's architecture (files side by side)
// and resolves every plan on every case. This much works on any machine: a variant that does not
// compile or whose plan fails on a case is rejected with its reason, the others are runnable.
// `device_present`: a GPU of the target can report the resources the compiler's log left out.
void compile_stage(const bench_options& options, store& records, compile_cache& cache,
                   bool device_present, bench_report& report, compiled_candidates& out);

// Marks a variant rejected, with its reason and the evidence in one line.
void reject(variant_result& r, reason_code reason, std::string message);

}  // namespace blaster
