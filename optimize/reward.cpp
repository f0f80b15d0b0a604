#include "optimize/reward.hpp"

#include "benchmarking/statistics/statistics.hpp"

namespace blaster {

std::optional<double> protocol_reward(std::span<const double> baseline_medians,
                                      std::span<const double> candidate_medians,
                                      std::uint64_t bootstrap_seed, int reward_sessions) {
  if (reward_sessions < min_reward_sessions) return std::nullopt;
  const auto n = static_cast<std::size_t>(reward_sessions);
  if (baseline_medians.size() < n || candidate_medians.size() < n) return std::nullopt;
  return bootstrap_speedup(baseline_medians.first(n), candidate_medians.first(n), bootstrap_seed,
                           reward_resamples, reward_confidence)
      .low;
}

}  // namespace blaster
