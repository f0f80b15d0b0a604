#include "benchmarking/runner/detail/screening.hpp"

#include <algorithm>
#include <set>

#include <spdlog/spdlog.h>

namespace blaster {

void screen(int best, bench_report& report, const std::vector<std::size_t>& survivors,
            std::vector<std::ptrdiff_t>& order, const std::function<double(std::size_t)>& rank,
            const std::function<bool(std::size_t)>& keep) {
  auto rank_of = [&](std::ptrdiff_t entry) {
    const std::size_t result = survivors[static_cast<std::size_t>(entry)];
    return rank ? rank(result) : report.results[result].session_medians_us[0];
  };
  std::vector<std::ptrdiff_t> candidates;
  for (std::ptrdiff_t entry : order) {
    if (entry < 0) continue;
    const variant_result& r = report.results[survivors[static_cast<std::size_t>(entry)]];
    if (!r.baseline && r.status != "rejected" && !r.session_medians_us.empty()) {
      candidates.push_back(entry);
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](std::ptrdiff_t a, std::ptrdiff_t b) { return rank_of(a) < rank_of(b); });
  if (candidates.size() <= static_cast<std::size_t>(best)) return;
  std::set<std::ptrdiff_t> kept(candidates.begin(), candidates.begin() + best);
  for (std::ptrdiff_t entry : candidates) {
    if (keep && keep(survivors[static_cast<std::size_t>(entry)])) kept.insert(entry);
  }
  std::vector<std::ptrdiff_t> next;
  for (std::ptrdiff_t entry : order) {
    variant_result& r =
        report.results[survivors[static_cast<std::size_t>(std::max<std::ptrdiff_t>(entry, 0))]];
    const bool stays = entry < 0 || r.baseline || kept.contains(entry) || r.status == "rejected";
    if (stays) {
      next.push_back(entry);
    } else {
      r.screened = true;
    }
  }
  spdlog::info("screened: {} of {} candidates go on to the remaining sessions", kept.size(),
               candidates.size());
  order = std::move(next);
}

}  // namespace blaster
