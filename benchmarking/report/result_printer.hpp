#pragma once

#include <ostream>

#include "benchmarking/report/bench_report.hpp"
#include "evidence/result_table.hpp"

namespace blaster {

// A bench run's results as a table: one row per variant, the evidence under each rejection, the
// run's device and ceilings before it and the legend after it. `console` keeps the metrics the
// console table shows; every metric otherwise (Markdown, CSV, JSON).
result_table bench_table(const bench_report& report, bool console);

// Per kernel: registers, stack, spills and shared memory, and the NVRTC log of each failure.
result_table compile_table(const bench_report& report);

// "_Z15layernorm_applyILi512ELi4EEv..." -> "layernorm_apply<512, 4>".
std::string readable_kernel(const std::string& mangled);

// The tables as the console shows them.
void print_bench_table(const bench_report& report, std::ostream& out);
void print_compile_table(const bench_report& report, std::ostream& out);

}  // namespace blaster
