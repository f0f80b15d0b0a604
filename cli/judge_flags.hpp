#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "benchmarking/runner/bench_runner.hpp"
#include "optimize/attempt.hpp"
#include "optimize/protocol.hpp"
#include "optimize/reward.hpp"

namespace blaster::cli {

// How optimize, serve and eval judge each candidate: the task, the timed case, the timing
// sessions, the counters and the input seed.
struct judge_flags {
  std::string task;
  std::string case_name;
  int sessions = 3;
  int reward_sessions = default_reward_sessions;  // --reward-sessions: the reward's protocol
  bool no_profile = false;
  std::optional<std::uint64_t> seed;
  std::string gpus;  // --gpus
};

// --task, --case, --sessions, --reward-sessions, --no-profile, --seed and --gpus; `what` names what is judged
// ("step").
void add_judge_flags(CLI::App& command, judge_flags& flags, const std::string& what);

// The flags that differ from their defaults as a command line spells them: " --case large".
std::string judge_flags_text(const judge_flags& flags);

// bench's options for judging one candidate at a time of `task`; `command` is recorded.
bench_options judge_options(const std::filesystem::path& root, const task_brief& task,
                            const judge_flags& flags, const std::string& command);

// A step's speedup with its interval, "2.10x [2.05, 2.16]", and the step as one or two lines of
// progress: number, status, reason, time, interval and reward, then its hypothesis.
std::string interval_text(const attempt& a);
std::string step_line(const attempt& a);

}  // namespace blaster::cli
