#pragma once

// The proposer's box. A proposer is any program the user names, and what it proposes is scored:
// it must not be able to change the evidence its steps are judged by, nor outlive the session.
// So blaster starts it through a keeper, `blaster __proposer_box`, a process of its own that:
// - gives the proposer an empty folder of its own (a fresh one under $TMPDIR, removed with the
//   box), which is its working folder, HOME and TMPDIR;
// - gives it an environment with nothing of blaster's: PATH, LANG, LANGUAGE, LC_*, TZ and TERM,
//   the variables the user names (never BLASTER_*), and those three folders;
// - confines it with Landlock where the kernel has it: it reads and runs what the user can, and
//   writes only in its folder and to /dev/null; where the kernel scopes signals (Landlock ABI 6),
//   it cannot signal blaster or the keeper either;
// - passes its standard error into proposer.log, up to a cap;
// - makes it the leader of its own process group, which dies with the keeper
//   (PR_SET_PDEATHSIG), and is the subreaper of everything it starts, so that when the leader
//   exits, blaster asks, or blaster dies (any way, kill -9 included: the keeper sees its channel
//   close), the keeper kills the group and then every process that left it (setsid), reaps them
//   all, and says how many had left.
// What the box does not do is in optimize/PROTOCOL.md ("The proposer's box").

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace blaster {

// [bytes] proposer.log's cap: what the proposer writes past it is counted and dropped.
inline constexpr std::size_t default_proposer_log_bytes = 16 * 1024 * 1024;

struct proposer_box_options {
  // The blaster executable whose `__proposer_box` keeps the proposer; empty: this one.
  std::filesystem::path keeper;
  // Names of variables of blaster's environment that the proposer gets as they are.
  std::vector<std::string> environment;
  std::size_t max_log_bytes = default_proposer_log_bytes;
};

// Why a name cannot be passed to the proposer (not a variable name, or one of blaster's own),
// or an empty string.
std::string refused_proposer_variable(const std::string& name);

// The proposer's environment, from `parent` ("NAME=value" entries): the kept names, the
// `passed` ones, and HOME and TMPDIR set to `folder`.
std::vector<std::string> proposer_environment(const std::vector<std::string>& parent,
                                              const std::filesystem::path& folder,
                                              const std::vector<std::string>& passed);

// `blaster __proposer_box --folder F --log-cap BYTES [--env NAME]... --command CMD`: the keeper.
// It finds, as its descriptors, 0 the proposer's standard input, 1 its standard output, 2
// proposer.log (opened for appending), 3 blaster's channel to it (end of file, or any byte: end
// the proposer) and 4 its own channel to blaster, on which it writes one JSON line when the
// proposer has started ({"event": "started", "pid", "confinement": {...}}, or {"event":
// "failed", "why"}) and one when the proposer has ended and everything it started is gone
// ({"event": "ended", "how", "exit_code" or "signal", "by", "moved_out", "left_running",
// "log_dropped_bytes"}).
int run_proposer_box(int argc, char** argv);

}  // namespace blaster
