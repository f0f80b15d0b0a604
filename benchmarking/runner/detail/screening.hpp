#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "benchmarking/report/bench_report.hpp"

namespace blaster {

// The screening between a bench's first session and the others: `order` holds indices into
// `survivors` (which holds indices into report.results), -1 for the baseline's A/A twin. Keeps
// the baseline, the twin, rejected entries and the `best` candidates that rank first, in order;
// marks the others screened. A candidate's rank is `rank` of its index in report.results, lower
// first; none given: its time in the first session. A candidate for which `keep` of its index
// holds goes on whatever its rank, beside the `best`.
void screen(int best, bench_report& report, const std::vector<std::size_t>& survivors,
            std::vector<std::ptrdiff_t>& order,
            const std::function<double(std::size_t)>& rank = {},
            const std::function<bool(std::size_t)>& keep = {});

}  // namespace blaster
