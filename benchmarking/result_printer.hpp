#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "benchmarking/bench_runner.hpp"

namespace blaster {

// The human table of a bench run: one row per variant, the evidence under each rejection.
void print_bench_table(const bench_report& report, std::ostream& out);

// Per kernel: registers, stack, spills and shared memory, and the NVRTC log of each failure.
void print_compile_table(const bench_report& report, std::ostream& out);

}  // namespace blaster
