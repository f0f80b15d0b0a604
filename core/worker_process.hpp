#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace blaster {

// How a supervised child ended, or, for a persistent_worker, how its request did.
struct worker_outcome {
  // answered: a persistent worker gave its last line for this request and still runs.
  enum class ending { exited, signaled, timed_out, not_started, answered };
  ending how = ending::not_started;
  int exit_code = -1;   // exited
  int signal = 0;       // signaled
  double wall_s = 0.0;  // [seconds] since it started; for a persistent worker, since the request
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
  // "NAME=value" entries set in the child's environment over the parent's: the GPU it may see
  // (CUDA_VISIBLE_DEVICES), say.
  std::vector<std::string> environment;
};

// Whether worker_limits::address_space_bytes is applied. An AddressSanitizer build reserves
// terabytes of shadow address space as it starts, so its children could not start under any
// cap: such a build (scripts/test.sh --sanitize) runs them uncapped.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool address_space_caps_apply = false;
#else
inline constexpr bool address_space_caps_apply = true;
#endif

// Runs argv (argv[0] is a path) as a child in its own process group, reads the lines it writes to
// worker_result_fd, and kills the whole group when the deadline passes. A crash or a hang ends
// only the child; the parent always gets an outcome. on_message, if given, sees each line as it
// arrives.
worker_outcome run_worker(const std::vector<std::string>& argv, std::chrono::milliseconds deadline,
                          const std::function<void(const std::string&)>& on_message = {},
                          const worker_limits& limits = {});

// A supervised worker that stays up between requests, so that what it prepares once (a loaded
// driver, say) serves many of them. Each request is one line on the child's standard input (a
// pipe; stdout and stderr still /dev/null, results still on worker_result_fd); the answer is the
// lines it writes until one that `is_last` accepts. A request that is not answered by its
// deadline kills the whole group, as does one during which the child ends; the next request then
// starts a fresh child, as does a request that finds the child gone since its last answer.
// Limits, process group, closed descriptors: exactly as run_worker. Lines a
// child writes after its last line belong to no request: the next request drops them. One
// thread at a time.
class persistent_worker {
 public:
  // `max_requests` > 0: a child that has answered that many is replaced before the next, so
  // that whatever a long-lived process gathers (its libraries' state across many contexts, say)
  // stays bounded.
  explicit persistent_worker(std::vector<std::string> argv, worker_limits limits = {},
                             int max_requests = 0);
  ~persistent_worker();  // stop()
  persistent_worker(const persistent_worker&) = delete;
  persistent_worker& operator=(const persistent_worker&) = delete;

  // Sends `request` (no newline inside; one is appended) and collects this request's lines; the
  // deadline covers starting a child too. how == answered when a last line came (messages end
  // with it; wall_s is this request's time); otherwise the child is gone (killed on the deadline:
  // timed_out; ended by itself: exited or signaled with its status), reaped, and peak_rss_bytes
  // filled; not_started when none could be started.
  worker_outcome exchange(const std::string& request, std::chrono::milliseconds deadline,
                          const std::function<bool(const std::string&)>& is_last,
                          const std::function<void(const std::string&)>& on_message = {});
  // Ends the child, if one is up (its input closed, a grace period, then its group killed); the
  // next request starts a fresh one. The destructor does this.
  void stop();
  [[nodiscard]] bool running() const;  // a child is up and has not ended
  [[nodiscard]] int started() const;   // how many children it has started so far

 private:
  struct state;  // the child and its pipes, defined where the machinery is
  std::vector<std::string> argv_;
  worker_limits limits_;
  int max_requests_ = 0;
  std::unique_ptr<state> state_;
  int started_ = 0;
  int answered_ = 0;  // by the current child
};

// The blaster executable this process runs, which its workers, compiles and built-in proposers
// run again.
std::filesystem::path this_executable();

}  // namespace blaster
