#include "core/worker_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/error.hpp"

namespace blaster {
namespace {

// The child between fork and exec: only async-signal-safe calls, then _exit on any failure.
// `directory` is the working folder's path, or null to keep the parent's.
[[noreturn]] void become_worker(const std::vector<char*>& argv, int result_write,
                                const char* directory, std::uint64_t address_space_bytes) {
  ::setpgid(0, 0);  // its own group, so that a kill reaches whatever it starts
  if (directory != nullptr && ::chdir(directory) != 0) ::_exit(126);
  if (address_space_bytes > 0) {
    const rlimit cap{.rlim_cur = address_space_bytes, .rlim_max = address_space_bytes};
    const rlimit no_core{.rlim_cur = 0, .rlim_max = 0};
    if (::setrlimit(RLIMIT_AS, &cap) != 0 || ::setrlimit(RLIMIT_CORE, &no_core) != 0) {
      ::_exit(126);
    }
  }
  const int null_fd = ::open("/dev/null", O_RDWR);
  if (null_fd < 0) ::_exit(126);
  if (::dup2(result_write, worker_result_fd) < 0) ::_exit(126);
  for (int fd = 0; fd <= 2; ++fd) {
    if (::dup2(null_fd, fd) < 0) ::_exit(126);
  }
  // Everything else the parent had open stays behind.
  if (::close_range(worker_result_fd + 1, ~0U, 0) != 0) ::_exit(126);
  ::signal(SIGPIPE, SIG_DFL);
  ::execv(argv[0], argv.data());
  ::_exit(127);
}

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
  }
  return "?";
}

worker_outcome run_worker(const std::vector<std::string>& argv, std::chrono::milliseconds deadline,
                          const std::function<void(const std::string&)>& on_message,
                          const worker_limits& limits) {
  worker_outcome outcome;
  if (argv.empty()) {
    outcome.error = "no program to run";
    return outcome;
  }
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    outcome.error = fmt::format("pipe: {}", std::strerror(errno));
    return outcome;
  }
  std::vector<char*> c_argv;
  for (const auto& arg : argv) c_argv.push_back(const_cast<char*>(arg.c_str()));
  c_argv.push_back(nullptr);
  // Made before the fork: the child may not allocate.
  const std::string directory = limits.working_directory.string();

  const auto started = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    outcome.error = fmt::format("fork: {}", std::strerror(errno));
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return outcome;
  }
  if (pid == 0) {
    become_worker(c_argv, pipe_fds[1], directory.empty() ? nullptr : directory.c_str(),
                  limits.address_space_bytes);
  }
  ::setpgid(pid, pid);  // also here, so that a kill right away reaches the group
  ::close(pipe_fds[1]);

  const auto until = started + deadline;
  std::string pending;
  bool timed_out = false;
  // Whether the child has ended, without reaping it: its group id stays reserved until its
  // leftovers are killed.
  auto child_ended = [pid] {
    siginfo_t info{};
    return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT | WNOHANG) == 0 &&
           info.si_pid == pid;
  };
  enum class read_state { data, nothing, closed };
  auto read_some = [&](int timeout_ms) {
    pollfd p{.fd = pipe_fds[0], .events = POLLIN, .revents = 0};
    const int ready = ::poll(&p, 1, timeout_ms);
    if (ready == 0 || (ready < 0 && errno == EINTR)) return read_state::nothing;
    if (ready < 0) return read_state::closed;
    char chunk[65536];
    const ssize_t n = ::read(pipe_fds[0], chunk, sizeof chunk);
    if (n < 0) return errno == EINTR ? read_state::nothing : read_state::closed;
    if (n == 0) return read_state::closed;
    pending.append(chunk, static_cast<std::size_t>(n));
    for (std::size_t end; (end = pending.find('\n')) != std::string::npos;) {
      outcome.messages.push_back(pending.substr(0, end));
      pending.erase(0, end + 1);
      if (on_message) on_message(outcome.messages.back());
    }
    return read_state::data;
  };
  for (;;) {
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    if (read_some(static_cast<int>(std::min<long long>(left.count(), 50))) == read_state::closed) {
      break;
    }
    if (child_ended()) {
      // What it wrote before ending is in the pipe already; a leftover of its group may hold
      // the pipe open, so take what is there and stop.
      while (read_some(0) == read_state::data) {
      }
      break;
    }
  }
  if (timed_out) ::kill(-pid, SIGKILL);
  ::close(pipe_fds[0]);

  // A child that closed its channel early may still run: the deadline holds for it too. Wait
  // without reaping, so that the group id stays reserved until its leftovers are killed.
  for (;;) {
    siginfo_t info{};
    const int flags = WEXITED | WNOWAIT | (timed_out ? 0 : WNOHANG);
    const int waited = ::waitid(P_PID, static_cast<id_t>(pid), &info, flags);
    if (waited == 0 && info.si_pid == pid) break;
    if (waited < 0 && errno == EINTR) continue;
    if (waited < 0) break;  // no such child: nothing left to wait for
    if (std::chrono::steady_clock::now() >= until) {
      timed_out = true;
      ::kill(-pid, SIGKILL);
      continue;
    }
    ::usleep(1000);
  }
  ::kill(-pid, SIGKILL);  // whatever the child left running in its group goes with it
  int status = 0;
  rusage usage{};
  while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  outcome.peak_rss_bytes = static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // KiB on Linux
  if (!pending.empty()) outcome.messages.push_back(pending);  // a last line with no newline
  outcome.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (timed_out) {
    outcome.how = worker_outcome::ending::timed_out;
  } else if (WIFSIGNALED(status)) {
    outcome.how = worker_outcome::ending::signaled;
    outcome.signal = WTERMSIG(status);
  } else {
    outcome.how = worker_outcome::ending::exited;
    outcome.exit_code = WEXITSTATUS(status);
  }
  return outcome;
}

std::filesystem::path this_executable() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) BLASTER_THROW("cannot find the blaster executable: {}", ec.message());
  return path;
}

}  // namespace blaster
