#pragma once

// optimize's flags, and the session's settings they make: what a session records when it begins
// and what `optimize --resume` starts it again with.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "benchmarking/runner/gpu_choice.hpp"
#include "cli/judge_flags.hpp"
#include "optimize/session_resume.hpp"

namespace blaster {
class store;
}

namespace blaster::cli {

struct optimize_flags {
  judge_flags judge;
  std::string proposer;
  std::optional<int> steps;
  std::optional<double> minutes;
  int history = 8;
  double reply_timeout_s = 300.0;
  std::vector<std::filesystem::path> candidates;
  std::vector<std::string> proposer_env;
  std::optional<std::string> resume;
};

// The session's settings as its run keeps them (optimize_options::settings): the flags as
// given, candidate files by their absolute paths.
nlohmann::json settings_of(const optimize_flags& f);

// The session --resume names, with its settings in `f`; refused where it cannot be resumed, where
// it optimizes another task than --task, or where a flag of `cmd` would change its settings.
resumable_session resumed_session(store& records, const CLI::App& cmd, optimize_flags& f);

// The GPUs a session judges its steps on at once, one choice each: each ordinal of `gpus` where
// it names several (all of them for "all", where they can be listed); else `gpus` alone.
std::vector<gpu_choice> one_gpu_each(const gpu_choice& gpus);

}  // namespace blaster::cli
