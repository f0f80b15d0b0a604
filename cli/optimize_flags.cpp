#include "cli/optimize_flags.hpp"

#include <array>

#include "benchmarking/runner/bench_runner.hpp"
#include "core/cuda_driver.hpp"
#include "core/error.hpp"
#include "core/worker_process.hpp"
#include "evidence/store.hpp"

namespace blaster::cli {
namespace {

// The flags that make a session what it is; --resume takes them from the session's record and
// refuses them beside it.
constexpr std::array session_flags = {
    "--case",    "--sessions", "--reward-sessions", "--no-profile",   "--seed",
    "--gpus",    "--proposer", "--candidate",       "--proposer-env", "--steps",
    "--minutes", "--history",  "--reply-timeout"};

// The flags a session recorded, for its resume.
void apply_settings(const nlohmann::json& s, optimize_flags& f) {
  judge_flags& j = f.judge;
  j.task = s.at("task").get<std::string>();
  j.case_name = s.at("case").get<std::string>();
  j.sessions = s.at("sessions").get<int>();
  j.reward_sessions = s.at("reward_sessions").get<int>();
  j.no_profile = s.at("no_profile").get<bool>();
  if (!s.at("seed").is_null()) j.seed = s.at("seed").get<std::uint64_t>();
  j.gpus = s.at("gpus").get<std::string>();
  f.proposer = s.at("proposer").get<std::string>();
  f.candidates.clear();
  for (const auto& c : s.at("candidates")) f.candidates.emplace_back(c.get<std::string>());
  f.proposer_env = s.at("proposer_env").get<std::vector<std::string>>();
  if (!s.at("steps").is_null()) f.steps = s.at("steps").get<int>();
  if (!s.at("minutes").is_null()) f.minutes = s.at("minutes").get<double>();
  f.history = s.at("history").get<int>();
  f.reply_timeout_s = s.at("reply_timeout_s").get<double>();
}

}  // namespace

nlohmann::json settings_of(const optimize_flags& f) {
  const judge_flags& j = f.judge;
  std::vector<std::string> candidates;
  for (const auto& c : f.candidates) candidates.push_back(std::filesystem::absolute(c).string());
  return {{"task", j.task},
          {"case", j.case_name},
          {"sessions", j.sessions},
          {"reward_sessions", j.reward_sessions},
          {"no_profile", j.no_profile},
          {"seed", j.seed ? nlohmann::json(*j.seed) : nullptr},
          {"gpus", j.gpus},
          {"proposer", f.proposer},
          {"candidates", candidates},
          {"proposer_env", f.proposer_env},
          {"steps", f.steps ? nlohmann::json(*f.steps) : nullptr},
          {"minutes", f.minutes ? nlohmann::json(*f.minutes) : nullptr},
          {"history", f.history},
          {"reply_timeout_s", f.reply_timeout_s}};
}

resumable_session resumed_session(store& records, const CLI::App& cmd, optimize_flags& f) {
  resumable_session r = find_resumable_session(records, *f.resume);
  if (!f.judge.task.empty() && f.judge.task != r.task) {
    BLASTER_INPUT_ERROR(
        "run {} optimizes {}, not {}: --resume continues a session of its own task; drop "
        "--task, or resume a session of {} (`blaster runs` lists them)",
        r.run_id, r.task, f.judge.task, f.judge.task);
  }
  for (const char* flag : session_flags) {
    if (cmd.count(flag) > 0) {
      BLASTER_INPUT_ERROR(
          "{} with --resume: run {} goes on with the settings it was started with; drop {}, or "
          "start a new session with it",
          flag, r.run_id, flag);
    }
  }
  try {
    apply_settings(r.settings, f);
  } catch (const nlohmann::json::exception& e) {
    BLASTER_INPUT_ERROR("run {}'s recorded settings cannot be read ({}); start a new session",
                        r.run_id, e.what());
  }
  return r;
}

std::vector<gpu_choice> one_gpu_each(const gpu_choice& gpus) {
  std::vector<int> ordinals = gpus.ordinals;
  if (gpus.all) {
    try {
      for (const gpu_lane& lane : choose_gpus(gpus, this_executable())) {
        ordinals.push_back(lane.ordinal);
      }
    } catch (const cuda::gpu_unavailable&) {
      return {gpus};  // no GPU here: the first step says so
    }
  }
  if (ordinals.size() <= 1) return {gpus};
  std::vector<gpu_choice> each;
  for (const int ordinal : ordinals)
    each.push_back(gpu_choice{.all = false, .ordinals = {ordinal}});
  return each;
}

}  // namespace blaster::cli
