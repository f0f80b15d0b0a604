#include "optimize/proposer_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/error.hpp"

namespace blaster {
namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

// The child between fork and exec: only async-signal-safe calls, then _exit on any failure.
[[noreturn]] void become_proposer(const char* command, int stdin_fd, int stdout_fd, int stderr_fd,
                                  const char* directory) {
  ::setpgid(0, 0);  // its own group, so that a kill reaches whatever it starts
  if (directory != nullptr && ::chdir(directory) != 0) ::_exit(126);
  if (::dup2(stdin_fd, 0) < 0 || ::dup2(stdout_fd, 1) < 0 || ::dup2(stderr_fd, 2) < 0) {
    ::_exit(126);
  }
  if (::close_range(3, ~0U, 0) != 0) ::_exit(126);
  ::signal(SIGPIPE, SIG_DFL);
  ::execl("/bin/sh", "sh", "-c", command, static_cast<char*>(nullptr));
  ::_exit(127);
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

proposer_process::proposer_process(const std::string& command,
                                   const std::filesystem::path& stderr_log,
                                   const std::filesystem::path& working_directory) {
  int in_pipe[2];
  int out_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0) BLASTER_THROW("pipe: {}", std::strerror(errno));
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    ::close(in_pipe[0]);
    ::close(in_pipe[1]);
    BLASTER_THROW("pipe: {}", std::strerror(errno));
  }
  const int log_fd =
      ::open(stderr_log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1]}) ::close(fd);
    BLASTER_THROW("{}: cannot open the proposer's log: {}", stderr_log.string(),
                  std::strerror(errno));
  }
  // Made before the fork: the child may not allocate.
  const std::string directory = working_directory.string();
  const pid_t pid = ::fork();
  if (pid == 0) {
    become_proposer(command.c_str(), in_pipe[0], out_pipe[1], log_fd,
                    directory.empty() ? nullptr : directory.c_str());
  }
  const int fork_errno = errno;
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(log_fd);
  if (pid < 0) {
    ::close(in_pipe[1]);
    ::close(out_pipe[0]);
    BLASTER_THROW("fork: {}", std::strerror(fork_errno));
  }
  ::setpgid(pid, pid);  // also here, so that a kill right after the fork finds the group
  pid_ = pid;
  // Writes must never block past a deadline: a proposer that stops reading fills the pipe.
  ::fcntl(in_pipe[1], F_SETFL, ::fcntl(in_pipe[1], F_GETFL) | O_NONBLOCK);
  to_child_ = in_pipe[1];
  from_child_ = out_pipe[0];
}

proposer_process::~proposer_process() { stop(); }

std::string proposer_process::stop() {
  close_fd(to_child_);
  close_fd(from_child_);
  if (pid_ <= 0) return gone_;
  ::kill(-pid_, SIGKILL);
  int status = 0;
  pid_t waited;
  do {
    waited = ::waitpid(pid_, &status, 0);
  } while (waited < 0 && errno == EINTR);
  pid_ = -1;
  if (waited < 0) return "its status is unknown";
  if (WIFEXITED(status)) return fmt::format("exited with code {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                       ::strsignal(WTERMSIG(status)));
  }
  return "ended";
}

proposer_process::answer proposer_process::end(std::string ended, std::string why, double wait_s) {
  stop();
  gone_code_ = ended;
  gone_ = why;
  return answer{.line = std::nullopt, .ended = std::move(ended), .why = std::move(why),
                .wait_s = wait_s};
}

void proposer_process::drain() {
  char buffer[65536];
  for (;;) {
    pollfd p{.fd = from_child_, .events = POLLIN, .revents = 0};
    if (::poll(&p, 1, 0) <= 0 || (p.revents & POLLIN) == 0) return;
    const ssize_t n = ::read(from_child_, buffer, sizeof buffer);
    if (n <= 0) return;  // an exit shows when the reply is awaited
  }
}

proposer_process::answer proposer_process::ask(std::string_view request,
                                               std::chrono::milliseconds deadline,
                                               std::size_t max_bytes) {
  if (pid_ <= 0) {
    return answer{.line = std::nullopt, .ended = gone_code_, .why = "the proposer " + gone_,
                  .wait_s = 0.0};
  }
  // Lines it wrote that no request asked for are not an answer to this one: whatever it sent
  // before this request, buffered or still in the pipe, is dropped.
  pending_.clear();
  drain();
  std::string out(request);
  out.push_back('\n');
  // A proposer that stopped reading must not kill blaster with SIGPIPE.
  struct sigaction ignore {};
  struct sigaction previous {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &previous);
  const auto started = clock_type::now();
  const auto until = started + deadline;
  std::size_t written = 0;
  std::string failure;
  while (written < out.size()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - clock_type::now());
    if (left.count() <= 0) {
      failure = "timeout";
      break;
    }
    pollfd p{.fd = to_child_, .events = POLLOUT, .revents = 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // the loop's deadline check ends a timeout
    const ssize_t n = ::write(to_child_, out.data() + written, out.size() - written);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      failure = "closed";
      break;
    }
    written += static_cast<std::size_t>(n);
  }
  ::sigaction(SIGPIPE, &previous, nullptr);
  if (failure == "timeout") {
    return end("proposer_timeout",
               fmt::format("the proposer read no request within {:.1f} s", seconds_since(started)),
               seconds_since(started));
  }
  if (!failure.empty()) {
    const std::string how = stop();
    return end("proposer_exited", fmt::format("the proposer {} before reading a request", how),
               seconds_since(started));
  }

  const auto replied = clock_type::now();
  char buffer[65536];
  for (;;) {
    const auto newline = pending_.find('\n');
    if (newline != std::string::npos) {
      if (newline > max_bytes) break;
      std::string line = pending_.substr(0, newline);
      pending_.erase(0, newline + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      return answer{.line = std::move(line), .ended = {}, .why = {},
                    .wait_s = seconds_since(replied)};
    }
    if (pending_.size() > max_bytes) break;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - clock_type::now());
    if (left.count() <= 0) {
      return end("proposer_timeout",
                 fmt::format("the proposer sent no reply within {:.1f} s",
                             std::chrono::duration<double>(deadline).count()),
                 seconds_since(replied));
    }
    pollfd p{.fd = from_child_, .events = POLLIN, .revents = 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = ::read(from_child_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string how = stop();
      return end("proposer_exited", fmt::format("the proposer {} before replying", how),
                 seconds_since(replied));
    }
    pending_.append(buffer, static_cast<std::size_t>(n));
  }
  return end("proposer_flood",
             fmt::format("the proposer's reply passed {} bytes without ending its line",
                         max_bytes),
             seconds_since(replied));
}

}  // namespace blaster
