#include "optimize/proposer_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/sigpipe_guard.hpp"
#include "core/worker_process.hpp"

extern char** environ;

namespace blaster {
namespace {

using clock_type = std::chrono::steady_clock;

// How long the box may take to start, and the keeper to end everything when asked (it gives
// processes that will not die ten seconds).
constexpr auto start_patience = std::chrono::seconds(20);
constexpr auto stop_patience = std::chrono::seconds(20);
// How long a proposer that closed its output has to be seen ending, so that the session says
// how it ended rather than only that the output closed.
constexpr auto closed_patience = std::chrono::seconds(2);

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

int milliseconds_until(clock_type::time_point until) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - clock_type::now());
  return static_cast<int>(std::max<long long>(0, left.count()));
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// The keeper between fork and exec: only async-signal-safe calls, then _exit on any failure.
// `sources` become its descriptors 0 to 4 (proposer_box.hpp says which is which).
[[noreturn]] void become_keeper(const char* path, char* const* argv, const int (&sources)[5],
                                const char* folder) {
  // Its own group, so that a terminal's SIGINT to blaster's group leaves it to clean up.
  ::setpgid(0, 0);
  // Every source above the five places first, so that placing one cannot close another.
  constexpr int above = 5;
  int moved[5];
  for (int i = 0; i < 5; ++i) {
    moved[i] = ::fcntl(sources[i], F_DUPFD, above);
    if (moved[i] < 0) ::_exit(126);
  }
  for (int i = 0; i < 5; ++i) {
    if (::dup2(moved[i], i) < 0) ::_exit(126);
  }
  if (::close_range(above, ~0U, 0) != 0) ::_exit(126);
  // Its working folder is the box's, so that it names no folder of blaster's either.
  if (::chdir(folder) != 0) ::_exit(126);
  ::signal(SIGPIPE, SIG_DFL);
  ::execve(path, argv, environ);
  ::_exit(127);
}

}  // namespace

proposer_process::proposer_process(const std::string& command,
                                   const std::filesystem::path& stderr_log,
                                   const proposer_box_options& box) {
  const std::filesystem::path keeper = box.keeper.empty() ? this_executable() : box.keeper;
  // A fresh folder outside the home: its path is the proposer's working folder and HOME.
  std::string folder = (std::filesystem::temp_directory_path() / "blaster-proposer-XXXXXX").string();
  if (::mkdtemp(folder.data()) == nullptr) {
    BLASTER_THROW("{}: cannot make the proposer's folder: {}", folder, std::strerror(errno));
  }
  folder_ = folder;
  std::vector<int> fds;
  auto fail = [&](const std::string& why) {
    for (const int fd : fds) ::close(fd);
    std::error_code ignored;
    std::filesystem::remove_all(folder_, ignored);
    throw error(why);
  };
  int in_pipe[2], out_pipe[2], control[2], status[2];
  for (int* p : {in_pipe, out_pipe, control, status}) {
    if (::pipe2(p, O_CLOEXEC) != 0) fail(fmt::format("pipe: {}", std::strerror(errno)));
    fds.insert(fds.end(), {p[0], p[1]});
  }
  const int log_fd = ::open(stderr_log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    fail(fmt::format("{}: cannot open the proposer's log: {}", stderr_log.string(),
                     std::strerror(errno)));
  }
  fds.push_back(log_fd);

  std::vector<std::string> args = {keeper.string(), "__proposer_box", "--folder", folder,
                                   "--log-cap",     std::to_string(box.max_log_bytes)};
  for (const auto& name : box.environment) args.insert(args.end(), {"--env", name});
  args.insert(args.end(), {"--command", command});
  // Made before the fork: the child may not allocate.
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const int sources[5] = {in_pipe[0], out_pipe[1], log_fd, control[0], status[1]};
  const std::string keeper_path = keeper.string();
  const pid_t pid = ::fork();
  if (pid == 0) become_keeper(keeper_path.c_str(), argv.data(), sources, folder.c_str());
  if (pid < 0) fail(fmt::format("fork: {}", std::strerror(errno)));
  ::setpgid(pid, pid);
  for (const int fd : sources) ::close(fd);
  keeper_ = pid;
  to_child_ = in_pipe[1];
  from_child_ = out_pipe[0];
  control_ = control[1];
  status_ = status[0];
  // Writes must never block past a deadline: a proposer that stops reading fills the pipe.
  for (const int fd : {to_child_, from_child_, status_}) {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  }

  std::vector<std::string> parent;
  for (char** e = environ; *e != nullptr; ++e) parent.emplace_back(*e);
  nlohmann::json names = nlohmann::json::array();
  for (const auto& entry : proposer_environment(parent, folder_, box.environment)) {
    names.push_back(entry.substr(0, entry.find('=')));
  }
  record_ = {{"folder", folder_.string()}, {"environment", names}};

  const auto until = clock_type::now() + start_patience;
  while (!started_ && failed_.empty() && !status_closed_ && clock_type::now() < until) {
    read_status(milliseconds_until(until));
  }
  if (!started_) {
    const std::string why = !failed_.empty() ? failed_
                            : status_closed_ ? "its keeper ended before it started"
                                             : "its keeper did not start it in time";
    stop();
    BLASTER_THROW("the proposer's box could not be made ({} __proposer_box): {}", keeper_path,
                  why);
  }
}

proposer_process::~proposer_process() { stop(); }

void proposer_process::read_status(int timeout_ms) {
  if (status_closed_ || status_ < 0) return;
  pollfd p{.fd = status_, .events = POLLIN, .revents = 0};
  if (::poll(&p, 1, timeout_ms) <= 0) return;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(status_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;  // nothing more now
    if (n == 0) {
      status_closed_ = true;
      break;
    }
    status_pending_.append(buffer, static_cast<std::size_t>(n));
  }
  for (std::size_t end; (end = status_pending_.find('\n')) != std::string::npos;) {
    const auto event = nlohmann::json::parse(status_pending_.substr(0, end), nullptr, false);
    status_pending_.erase(0, end + 1);
    if (!event.is_object()) continue;
    const std::string kind = event.value("event", "");
    if (kind == "started") {
      started_ = event;
      leader_ = event.value("pid", -1);
      record_["confinement"] = event.value("confinement", nlohmann::json::object());
    } else if (kind == "failed") {
      failed_ = event.value("why", "the box failed");
    } else if (kind == "ended") {
      ended_ = event;
    }
  }
}

std::string proposer_process::ended_how() const {
  if (ended_) return ended_->value("how", "ended");
  return "ended with its keeper, which was killed";
}

std::string proposer_process::stop() {
  close_fd(to_child_);
  if (keeper_ <= 0) return gone_;
  // The keeper's cue: it kills everything, then says how it ended. A byte says blaster ended
  // the session; the channel closing alone, that blaster's process ended.
  if (control_ >= 0 && !ended_) {
    const sigpipe_blocked guard;  // the keeper may have ended already
    const char end = 'q';
    static_cast<void>(::write(control_, &end, 1));
  }
  close_fd(control_);
  const auto until = clock_type::now() + stop_patience;
  while (!ended_ && !status_closed_ && clock_type::now() < until) {
    read_status(milliseconds_until(until));
  }
  if (!ended_) {
    // The keeper is gone or stuck: its proposer's group goes with it from here.
    ::kill(keeper_, SIGKILL);
    if (leader_ > 0) ::kill(-leader_, SIGKILL);
  }
  while (::waitpid(keeper_, nullptr, 0) < 0 && errno == EINTR) {
  }
  keeper_ = -1;
  close_fd(from_child_);
  close_fd(status_);
  std::error_code ignored;
  std::filesystem::remove_all(folder_, ignored);  // the keeper's job, unless it was killed
  const std::string how = ended_how();
  nlohmann::json ended = ended_ ? *ended_ : nlohmann::json{{"how", how}};
  ended.erase("event");
  record_["ended"] = ended;
  if (gone_.empty()) gone_ = how;
  return how;
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
    const ssize_t n = ::read(from_child_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // nothing more now; an exit shows when the reply is awaited
  }
}

void proposer_process::take_rest(std::size_t max_bytes) {
  char buffer[65536];
  while (pending_.size() <= max_bytes) {
    const ssize_t n = ::read(from_child_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    pending_.append(buffer, static_cast<std::size_t>(n));
  }
}

proposer_process::answer proposer_process::ask(std::string_view request,
                                               std::chrono::milliseconds deadline,
                                               std::size_t max_bytes) {
  if (keeper_ <= 0) {
    return answer{.line = std::nullopt, .ended = gone_code_, .why = gone_, .wait_s = 0.0};
  }
  // Lines it wrote that no request asked for are not an answer to this one: whatever it sent
  // before this request, buffered or still in the pipe, is dropped.
  pending_.clear();
  drain();
  read_status(0);
  std::string out(request);
  out.push_back('\n');
  const auto started = clock_type::now();
  const auto until = started + deadline;
  std::size_t written = 0;
  std::string failure;
  while (written < out.size() && failure.empty()) {
    if (ended_ || status_closed_) {
      failure = "closed";
      break;
    }
    if (clock_type::now() >= until) {
      failure = "timeout";
      break;
    }
    pollfd fds[2] = {{.fd = to_child_, .events = POLLOUT, .revents = 0},
                     {.fd = status_, .events = POLLIN, .revents = 0}};
    const int ready = ::poll(fds, 2, milliseconds_until(until));
    if (ready <= 0) continue;  // EINTR, or the loop's deadline check ends a timeout
    if (fds[1].revents != 0) read_status(0);
    if (fds[0].revents == 0) continue;
    // A proposer that stopped reading must not kill blaster with SIGPIPE.
    const sigpipe_blocked guard;
    const ssize_t n = ::write(to_child_, out.data() + written, out.size() - written);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) failure = "closed";
    if (n > 0) written += static_cast<std::size_t>(n);
  }
  if (failure == "timeout") {
    return end("proposer_timeout",
               fmt::format("the proposer read no request within {:.1f} s", seconds_since(started)),
               seconds_since(started));
  }
  if (!failure.empty()) {
    // Its input closed: it has ended, or is ending. Its keeper, which looks every few
    // milliseconds, says how, unless blaster ends the session first.
    const auto until_end = clock_type::now() + closed_patience;
    while (!ended_ && !status_closed_ && clock_type::now() < until_end) {
      read_status(milliseconds_until(until_end));
    }
    const std::string how = stop();
    return end("proposer_exited", fmt::format("the proposer {} before reading a request", how),
               seconds_since(started));
  }

  const auto replied = clock_type::now();
  bool output_closed = false;
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
    if (ended_ || status_closed_) {
      // It ended: a reply it wrote first is still in the pipe, whoever else holds it open.
      take_rest(max_bytes);
      if (pending_.find('\n') != std::string::npos || pending_.size() > max_bytes) continue;
      const std::string how = stop();
      return end("proposer_exited", fmt::format("the proposer {} before replying", how),
                 seconds_since(replied));
    }
    if (output_closed) {
      // It closed its output: it can no longer reply. Its end, if it comes, says how.
      const auto until_end = std::min(until, clock_type::now() + closed_patience);
      while (!ended_ && !status_closed_ && clock_type::now() < until_end) {
        read_status(milliseconds_until(until_end));
      }
      if (ended_ || status_closed_) continue;
      stop();
      return end("proposer_exited", "the proposer closed its standard output before replying",
                 seconds_since(replied));
    }
    if (clock_type::now() >= until) {
      return end("proposer_timeout",
                 fmt::format("the proposer sent no reply within {:.1f} s",
                             std::chrono::duration<double>(deadline).count()),
                 seconds_since(replied));
    }
    pollfd fds[2] = {{.fd = from_child_, .events = POLLIN, .revents = 0},
                     {.fd = status_, .events = POLLIN, .revents = 0}};
    if (::poll(fds, 2, milliseconds_until(until)) <= 0) continue;
    if (fds[1].revents != 0) read_status(0);
    if (fds[0].revents == 0) continue;
    const ssize_t n = ::read(from_child_, buffer, sizeof buffer);
    if (n < 0) continue;  // EINTR, EAGAIN
    if (n == 0) {
      output_closed = true;
      continue;
    }
    pending_.append(buffer, static_cast<std::size_t>(n));
  }
  return end("proposer_flood",
             fmt::format("the proposer's reply passed {} bytes without ending its line",
                         max_bytes),
             seconds_since(replied));
}

}  // namespace blaster
