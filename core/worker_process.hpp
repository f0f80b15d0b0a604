#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace blaster {

// How a supervised child ended.
struct worker_outcome {
  enum class ending { exited, signaled, timed_out, not_started };
  ending how = ending::not_started;
  int exit_code = -1;  // exited
  int signal = 0;      // signaled
  double wall_s = 0.0;
  // [bytes] its peak resident memory, from wait4's ru_maxrss: an upper bound, since it counts
  // what the parent had resident when it forked, until the child's exec.
  std::uint64_t peak_rss_bytes = 0;
  std::vector<std::string> messages;  // the lines it wrote on its result channel, in order
  std::string error;                  // not_started: why

  [[nodiscard]] bool clean_exit() const { return how == ending::exited && exit_code == 0; }
  [[nodiscard]] std::string describe() const;  // "killed by SIGSEGV", "timed out after 10.0 s"
};

// The file descriptor a worker writes its result lines to. It is the only descriptor the child
// inherits: its standard input, output and error are /dev/null, so that nothing it prints (a
// kernel's printf flood, say) reaches the parent's terminal.
inline constexpr int worker_result_fd = 3;

// What a child may use besides its time, set between fork and exec.
struct worker_limits {
  // [bytes] RLIMIT_AS, its whole address space: an allocation past it fails in the child. A
  // child under a cap also dumps no core, which would be as large. 0: no cap.
  std::uint64_t address_space_bytes = 0;
  std::filesystem::path working_directory;  // empty: the parent's
};

// Runs argv (argv[0] is a path) as a child in its own process group, reads the lines it writes to
// worker_result_fd, and kills the whole group when the deadline passes. A crash or a hang ends
// only the child; the parent always gets an outcome. on_message, if given, sees each line as it
// arrives.
worker_outcome run_worker(const std::vector<std::string>& argv, std::chrono::milliseconds deadline,
                          const std::function<void(const std::string&)>& on_message = {},
                          const worker_limits& limits = {});

// The blaster executable this process runs, which its workers, compiles and built-in proposers
// run again.
std::filesystem::path this_executable();

}  // namespace blaster
