#include "core/worker_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/sigpipe_guard.hpp"

namespace blaster {
namespace {

using steady = std::chrono::steady_clock;

// The child between fork and exec: only async-signal-safe calls, then _exit on any failure.
// `request_read` becomes its standard input, or -1 for /dev/null. `directory` is the working
// folder's path, or null to keep the parent's; `envp` its environment.
[[noreturn]] void become_worker(const std::vector<char*>& argv, char* const* envp, int result_write,
                                int request_read, const char* directory,
                                std::uint64_t address_space_bytes) {
  ::setpgid(0, 0);  // its own group, so that a kill reaches whatever it starts
  if (directory != nullptr && ::chdir(directory) != 0) ::_exit(126);
  if (address_space_caps_apply && address_space_bytes > 0) {
    const rlimit cap{.rlim_cur = address_space_bytes, .rlim_max = address_space_bytes};
    const rlimit no_core{.rlim_cur = 0, .rlim_max = 0};
    if (::setrlimit(RLIMIT_AS, &cap) != 0 || ::setrlimit(RLIMIT_CORE, &no_core) != 0) {
      ::_exit(126);
    }
  }
  // Every source above the four places first, so that placing one cannot close another (a
  // parent started with a standard stream closed hands out 0 to 2 for pipes).
  constexpr int above = worker_result_fd + 1;
  const int null_fd = ::open("/dev/null", O_RDWR);
  if (null_fd < 0) ::_exit(126);
  const int null_src = ::fcntl(null_fd, F_DUPFD, above);
  const int result_src = ::fcntl(result_write, F_DUPFD, above);
  const int input_src = request_read < 0 ? null_src : ::fcntl(request_read, F_DUPFD, above);
  if (null_src < 0 || result_src < 0 || input_src < 0) ::_exit(126);
  if (::dup2(result_src, worker_result_fd) < 0 || ::dup2(input_src, 0) < 0 ||
      ::dup2(null_src, 1) < 0 || ::dup2(null_src, 2) < 0) {
    ::_exit(126);
  }
  // Everything else the parent had open stays behind.
  if (::close_range(above, ~0U, 0) != 0) ::_exit(126);
  // A program it starts gets these as anywhere, whatever blaster does with them (blaster's own
  // children ignore SIGXFSZ again in main).
  ::signal(SIGPIPE, SIG_DFL);
  ::signal(SIGXFSZ, SIG_DFL);
  ::execve(argv[0], argv.data(), envp);
  ::_exit(127);
}

// The parent's environment with `overrides` ("NAME=value") in place of the same names: made
// before the fork, since the child may not allocate, and not through setenv, which another
// thread of the parent may be reading.
std::vector<std::string> child_environment(const std::vector<std::string>& overrides) {
  std::vector<std::string> entries;
  auto name_of = [](std::string_view entry) { return entry.substr(0, entry.find('=')); };
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const bool overridden = std::any_of(overrides.begin(), overrides.end(), [&](const auto& o) {
      return name_of(o) == name_of(entry);
    });
    if (!overridden) entries.emplace_back(entry);
  }
  entries.insert(entries.end(), overrides.begin(), overrides.end());
  return entries;
}

// How far a step with a child got before it returned.
enum class progress {
  done,      // sent all of it; or its last line came
  ended,     // the child ended, or closed the descriptor the step needed
  deadline,  // the deadline passed first
};

// One child of run_worker or persistent_worker, from fork to reaping: its process group, its
// result channel and, when it takes requests, its input.
class supervised_child {
 public:
  supervised_child() = default;
  // A child still up when its owner leaves (an on_message that threw, say) goes with it.
  ~supervised_child() {
    if (up()) {
      worker_outcome ignored;
      end(true, steady::now(), ignored);
    }
  }
  supervised_child(const supervised_child&) = delete;
  supervised_child& operator=(const supervised_child&) = delete;

  // Forks and execs argv; false, with why in `error`, when it could not. `with_input`: its
  // standard input is a pipe that send() writes, else /dev/null.
  bool start(const std::vector<std::string>& argv, const worker_limits& limits, bool with_input,
             std::string& error) {
    if (argv.empty()) {
      error = "no program to run";
      return false;
    }
    int result_fds[2];
    if (::pipe2(result_fds, O_CLOEXEC) != 0) {
      error = fmt::format("pipe: {}", std::strerror(errno));
      return false;
    }
    int request_fds[2] = {-1, -1};
    if (with_input && ::pipe2(request_fds, O_CLOEXEC) != 0) {
      error = fmt::format("pipe: {}", std::strerror(errno));
      ::close(result_fds[0]);
      ::close(result_fds[1]);
      return false;
    }
    auto close_all = [&] {
      for (const int fd : {result_fds[0], result_fds[1], request_fds[0], request_fds[1]}) {
        if (fd >= 0) ::close(fd);
      }
    };
    std::vector<char*> c_argv;
    for (const auto& arg : argv) c_argv.push_back(const_cast<char*>(arg.c_str()));
    c_argv.push_back(nullptr);
    // Made before the fork: the child may not allocate.
    const std::string directory = limits.working_directory.string();
    std::vector<std::string> environment = child_environment(limits.environment);
    std::vector<char*> c_envp;
    for (auto& entry : environment) c_envp.push_back(entry.data());
    c_envp.push_back(nullptr);

    const pid_t pid = ::fork();
    if (pid < 0) {
      error = fmt::format("fork: {}", std::strerror(errno));
      close_all();
      return false;
    }
    if (pid == 0) {
      become_worker(c_argv, c_envp.data(), result_fds[1], request_fds[0],
                    directory.empty() ? nullptr : directory.c_str(), limits.address_space_bytes);
    }
    ::setpgid(pid, pid);  // also here, so that a kill right away reaches the group
    ::close(result_fds[1]);
    if (request_fds[0] >= 0) ::close(request_fds[0]);
    pid_ = pid;
    result_read_ = result_fds[0];
    // Non-blocking, so that a child that does not read its input cannot hold the parent past
    // the deadline.
    request_write_ = request_fds[1];
    if (request_write_ >= 0) {
      ::fcntl(request_write_, F_SETFL, ::fcntl(request_write_, F_GETFL) | O_NONBLOCK);
    }
    pending_.clear();
    return true;
  }

  [[nodiscard]] bool up() const { return pid_ > 0; }

  // Whether the child has ended, without reaping it: its group id stays reserved until its
  // leftovers are killed.
  [[nodiscard]] bool ended() const {
    siginfo_t info{};
    return ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT | WNOHANG) == 0 &&
           info.si_pid == pid_;
  }

  // Writes `data` to the child's input by `until`. ended: it no longer reads it (gone, or its
  // input closed).
  progress send(std::string_view data, steady::time_point until) {
    const sigpipe_blocked guard;
    while (!data.empty()) {
      const ssize_t n = ::write(request_write_, data.data(), data.size());
      if (n >= 0) {
        data.remove_prefix(static_cast<std::size_t>(n));
        continue;
      }
      if (errno == EINTR) continue;
      if (errno != EAGAIN) return progress::ended;
      // Its input is full: it reads slowly, or not at all.
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - steady::now());
      if (left.count() <= 0) return progress::deadline;
      pollfd p{.fd = request_write_, .events = POLLOUT, .revents = 0};
      ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 50)));
      if (ended()) return progress::ended;  // a leftover of its group may hold its input open
    }
    return progress::done;
  }

  // Reads the lines the child writes into `messages` (on_message sees each) until one that
  // is_last accepts (done; what follows it stays unread), the child ends or closes its channel
  // (ended), or `until` passes (deadline). A null is_last accepts none.
  progress read_lines(steady::time_point until,
                      const std::function<bool(const std::string&)>& is_last,
                      std::vector<std::string>& messages,
                      const std::function<void(const std::string&)>& on_message) {
    auto take_lines = [&] {
      for (std::size_t end; (end = pending_.find('\n')) != std::string::npos;) {
        messages.push_back(pending_.substr(0, end));
        pending_.erase(0, end + 1);
        if (on_message) on_message(messages.back());
        if (is_last && is_last(messages.back())) return got::last;
      }
      return got::data;
    };
    auto read_some = [&](int timeout_ms) {
      const got state = fill(timeout_ms);
      return state == got::data ? take_lines() : state;
    };
    for (;;) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - steady::now());
      if (left.count() <= 0) return progress::deadline;
      const got state = read_some(static_cast<int>(std::min<long long>(left.count(), 50)));
      if (state == got::last) return progress::done;
      if (state == got::closed) return progress::ended;
      if (ended()) {
        // What it wrote before ending is in the pipe already; a leftover of its group may hold
        // the pipe open, so take what is there and stop.
        got more;
        while ((more = read_some(0)) == got::data) {
        }
        return more == got::last ? progress::done : progress::ended;
      }
    }
  }

  // Drops what the child wrote after its last line: it belongs to no request.
  void drop_unread() {
    pending_.clear();
    while (fill(0) == got::data) pending_.clear();
  }

  // Ends the child and fills outcome's ending, peak memory and a last line with no newline.
  // timed_out: its group is killed now; otherwise, with its input closed, it has until `until`
  // to end by itself and is then killed (and timed_out after all).
  void end(bool timed_out, steady::time_point until, worker_outcome& outcome) {
    if (timed_out) ::kill(-pid_, SIGKILL);
    ::close(result_read_);
    result_read_ = -1;
    if (request_write_ >= 0) ::close(request_write_);
    request_write_ = -1;

    // A child that closed its channel early may still run: the deadline holds for it too. Wait
    // without reaping, so that the group id stays reserved until its leftovers are killed.
    for (;;) {
      siginfo_t info{};
      const int flags = WEXITED | WNOWAIT | (timed_out ? 0 : WNOHANG);
      const int waited = ::waitid(P_PID, static_cast<id_t>(pid_), &info, flags);
      if (waited == 0 && info.si_pid == pid_) break;
      if (waited < 0 && errno == EINTR) continue;
      if (waited < 0) break;  // no such child: nothing left to wait for
      if (steady::now() >= until) {
        timed_out = true;
        ::kill(-pid_, SIGKILL);
        continue;
      }
      ::usleep(1000);
    }
    ::kill(-pid_, SIGKILL);  // whatever the child left running in its group goes with it
    int status = 0;
    rusage usage{};
    while (::wait4(pid_, &status, 0, &usage) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    outcome.peak_rss_bytes = static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // KiB on Linux
    if (!pending_.empty()) outcome.messages.push_back(pending_);  // a last line with no newline
    pending_.clear();
    if (timed_out) {
      outcome.how = worker_outcome::ending::timed_out;
    } else if (WIFSIGNALED(status)) {
      outcome.how = worker_outcome::ending::signaled;
      outcome.signal = WTERMSIG(status);
    } else {
      outcome.how = worker_outcome::ending::exited;
      outcome.exit_code = WEXITSTATUS(status);
    }
  }

 private:
  enum class got { data, last, nothing, closed };  // last: a line is_last accepted

  // Appends to pending_ what the channel has within timeout_ms.
  got fill(int timeout_ms) {
    pollfd p{.fd = result_read_, .events = POLLIN, .revents = 0};
    const int ready = ::poll(&p, 1, timeout_ms);
    if (ready == 0 || (ready < 0 && errno == EINTR)) return got::nothing;
    if (ready < 0) return got::closed;
    char chunk[65536];
    const ssize_t n = ::read(result_read_, chunk, sizeof chunk);
    if (n < 0) return errno == EINTR ? got::nothing : got::closed;
    if (n == 0) return got::closed;
    pending_.append(chunk, static_cast<std::size_t>(n));
    return got::data;
  }

  pid_t pid_ = -1;
  int result_read_ = -1;
  int request_write_ = -1;  // -1: its input is /dev/null
  std::string pending_;     // read from the channel, not yet a line or not yet taken
};

}  // namespace

std::string worker_outcome::describe() const {
  switch (how) {
    case ending::exited:
      return fmt::format("exited with code {}", exit_code);
    case ending::signaled:
      return fmt::format("killed by signal {} ({})", signal, ::strsignal(signal));
    case ending::timed_out:
      return fmt::format("timed out after {:.1f} s and was killed", wall_s);
    case ending::not_started:
      return "not started: " + error;
    case ending::answered:
      return "answered";
  }
  return "?";
}

worker_outcome run_worker(const std::vector<std::string>& argv, std::chrono::milliseconds deadline,
                          const std::function<void(const std::string&)>& on_message,
                          const worker_limits& limits) {
  worker_outcome outcome;
  supervised_child child;
  const auto started = steady::now();
  if (!child.start(argv, limits, false, outcome.error)) return outcome;
  const auto until = started + deadline;
  const progress read = child.read_lines(until, {}, outcome.messages, on_message);
  child.end(read == progress::deadline, until, outcome);
  outcome.wall_s = std::chrono::duration<double>(steady::now() - started).count();
  return outcome;
}

struct persistent_worker::state {
  supervised_child child;
};

persistent_worker::persistent_worker(std::vector<std::string> argv, worker_limits limits,
                                     int max_requests)
    : argv_(std::move(argv)),
      limits_(std::move(limits)),
      max_requests_(max_requests),
      state_(std::make_unique<state>()) {}

persistent_worker::~persistent_worker() { stop(); }

void persistent_worker::stop() {
  if (!state_->child.up()) return;
  // Its input closed is its cue to leave; one that does not is killed.
  constexpr auto grace = std::chrono::seconds(2);
  worker_outcome ignored;
  state_->child.end(false, steady::now() + grace, ignored);
}

worker_outcome persistent_worker::exchange(
    const std::string& request, std::chrono::milliseconds deadline,
    const std::function<bool(const std::string&)>& is_last,
    const std::function<void(const std::string&)>& on_message) {
  if (request.find('\n') != std::string::npos) {
    BLASTER_THROW("a request to a persistent worker is one line; this one has a newline: {:?}",
                  request);
  }
  worker_outcome outcome;
  supervised_child& child = state_->child;
  const auto started = steady::now();
  const auto until = started + deadline;
  if (child.up() && child.ended()) {
    // It left after its last answer (a worker may, after a failure): this request is not its.
    worker_outcome gone;
    child.end(false, until, gone);
  }
  if (child.up() && max_requests_ > 0 && answered_ >= max_requests_) stop();
  if (child.up()) {
    child.drop_unread();
  } else {
    if (!child.start(argv_, limits_, true, outcome.error)) return outcome;
    ++started_;
    answered_ = 0;
  }
  progress step = child.send(request + '\n', until);
  if (step == progress::done) step = child.read_lines(until, is_last, outcome.messages, on_message);
  if (step == progress::done) {
    outcome.how = worker_outcome::ending::answered;
    ++answered_;
  } else {
    child.end(step == progress::deadline, until, outcome);
  }
  outcome.wall_s = std::chrono::duration<double>(steady::now() - started).count();
  return outcome;
}

bool persistent_worker::running() const { return state_->child.up() && !state_->child.ended(); }

int persistent_worker::started() const { return started_; }

std::filesystem::path this_executable() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) BLASTER_THROW("cannot find the blaster executable: {}", ec.message());
  return path;
}

}  // namespace blaster
