#pragma once

#include <cstddef>
#include <vector>

#include "benchmarking/bench_report.hpp"

namespace blaster {

// The screening between a bench's first session and the others: `order` holds indices into
// `survivors` (which holds indices into report.results), -1 for the baseline's A/A twin. Keeps
// the baseline, the twin, rejected entries and the `best` candidates fastest in their first
// session, in order; marks the others screened.
void screen(int best, bench_report& report, const std::vector<std::size_t>& survivors,
            std::vector<std::ptrdiff_t>& order);

}  // namespace blaster
