#include "cli/judge_flags.hpp"

#include <fmt/format.h>

#include "cli/task_flags.hpp"
#include "optimize/untrusted_text.hpp"

namespace blaster::cli {

void add_judge_flags(CLI::App& command, judge_flags& flags, const std::string& what) {
  command.add_option("--task", flags.task, "task name: a folder under tasks/")->required();
  command.add_option("--case", flags.case_name, "time this case (default: the canonical one)");
  command
      .add_option("--sessions", flags.sessions,
                  fmt::format("timing sessions per {}, baseline and candidate alternating: the "
                              "speedup's interval needs at least 2",
                              what))
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  command
      .add_option("--reward-sessions", flags.reward_sessions,
                  fmt::format("the reward's protocol: every {} is timed in at least this many "
                              "sessions, and its reward is the low end of the speedup's 95% "
                              "interval over the first this many, whatever sessions a request "
                              "asks for (optimize/PROTOCOL.md, The reward)",
                              what))
      ->check(CLI::Range(min_reward_sessions, max_reward_sessions))
      ->capture_default_str();
  command.add_flag("--no-profile", flags.no_profile,
                   fmt::format("skip the hardware counters of each passing {} (faster; no "
                               "diagnosis)",
                               what));
  command.add_option("--seed", flags.seed,
                     fmt::format("input seed of every {} (default: drawn once per run, never "
                                 "sent out)",
                                 what));
  add_gpus_flag(command, flags.gpus,
                fmt::format("the variants of each {} are gated side by side, one on each GPU; "
                            "its timing sessions run on the first GPU named",
                            what));
}

std::string judge_flags_text(const judge_flags& flags) {
  std::string text;
  if (!flags.case_name.empty()) text += " --case " + flags.case_name;
  if (flags.sessions != 3) text += fmt::format(" --sessions {}", flags.sessions);
  if (flags.reward_sessions != default_reward_sessions) {
    text += fmt::format(" --reward-sessions {}", flags.reward_sessions);
  }
  if (flags.no_profile) text += " --no-profile";
  if (flags.seed) text += fmt::format(" --seed {}", *flags.seed);
  if (!flags.gpus.empty()) text += " --gpus " + flags.gpus;
  return text;
}

std::string interval_text(const attempt& a) {
  if (!a.speedup) return "-";
  if (!a.speedup_low || !a.speedup_high) return fmt::format("{:.2f}x", *a.speedup);
  return fmt::format("{:.2f}x [{:.2f}, {:.2f}]", *a.speedup, *a.speedup_low, *a.speedup_high);
}

std::string step_line(const attempt& a) {
  std::string line =
      fmt::format("step {:>3}  {:<12} {:<18}", a.step, a.status, a.reason.empty() ? "-" : a.reason);
  if (a.time_us) {
    line += fmt::format(" {:>10.2f} us  {}  reward {:.3f}", *a.time_us, interval_text(a), a.reward);
  } else if (!a.message.empty()) {
    line += " " + printable_text(first_chars(a.message, 120));
  }
  if (a.kept) line += "  (best)";
  // The proposer's words are shown, never obeyed: its escapes print as text.
  if (!a.hypothesis.empty()) line += "\n          " + printable_text(a.hypothesis);
  return line;
}

bench_options judge_options(const std::filesystem::path& root, const task_brief& task,
                            const judge_flags& flags, const std::string& command) {
  bench_options b;
  b.root = root;
  b.task = flags.task;
  b.timed_case = task.timed_case;
  b.seed = flags.seed;
  b.sessions = flags.sessions;
  b.profile = !flags.no_profile;
  if (!flags.gpus.empty()) b.gpus = parse_gpu_choice(flags.gpus);
  b.command = command;
  return b;
}

}  // namespace blaster::cli
