#pragma once

// The reward a loop trains on, under one protocol per session (optimize/PROTOCOL.md, "The
// reward"): the low end of the 95% paired bootstrap interval of the speedup over the first
// `reward_sessions` timing sessions of the run that judged the step, whatever number of sessions
// the reply asked for. Asking for more sessions narrows the interval recorded beside it; it
// cannot move the reward.

#include <cstdint>
#include <optional>
#include <span>

namespace blaster {

inline constexpr int default_reward_sessions = 3;
// One session's bootstrap draws that session again: its interval is its point estimate, which
// one lucky sample moves. The reward needs two at least.
inline constexpr int min_reward_sessions = 2;
inline constexpr int max_reward_sessions = 32;
inline constexpr int reward_resamples = 10000;
inline constexpr double reward_confidence = 0.95;

// The reward of a candidate that passed the gate, from the per-session medians of its run
// (baseline and candidate paired by session, in the order they ran) and the run's bootstrap
// seed: bootstrap_speedup(baseline[0, n), candidate[0, n), seed, 10000, 0.95).low, n =
// reward_sessions. Nothing (the step scores 0) where either side has fewer than n sessions.
std::optional<double> protocol_reward(std::span<const double> baseline_medians,
                                      std::span<const double> candidate_medians,
                                      std::uint64_t bootstrap_seed, int reward_sessions);

}  // namespace blaster
