#include "optimize/proposer_box.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <set>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/file_confinement.hpp"

extern char** environ;

namespace blaster {
namespace {

// The keeper's descriptors, as proposer_process places them.
constexpr int input_fd = 0;    // the proposer's standard input
constexpr int output_fd = 1;   // the proposer's standard output
constexpr int log_fd = 2;      // proposer.log
constexpr int control_fd = 3;  // from blaster
constexpr int status_fd = 4;   // to blaster

// [milliseconds] how often the keeper looks whether the proposer has ended.
constexpr int watch_ms = 20;
// How long the keeper goes on killing what will not die (a process stuck in the kernel).
constexpr auto kill_patience = std::chrono::seconds(10);
// How long it waits for the last bytes of the proposer's standard error once all is killed.
constexpr auto log_patience = std::chrono::seconds(2);

volatile sig_atomic_t terminate_requested = 0;

extern "C" void on_terminate(int /*signal*/) { terminate_requested = 1; }

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

void report(const nlohmann::json& event) { write_all(status_fd, event.dump() + "\n"); }

struct box_arguments {
  std::filesystem::path folder;
  std::size_t log_cap = default_proposer_log_bytes;
  std::vector<std::string> names;
  std::string command;
};

box_arguments parse_arguments(int argc, char** argv) {
  box_arguments a;
  bool has_command = false;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--folder") {
      a.folder = value;
    } else if (flag == "--log-cap") {
      a.log_cap = std::stoull(value);
    } else if (flag == "--env") {
      a.names.push_back(value);
    } else if (flag == "--command") {
      a.command = value;
      has_command = true;
    } else {
      throw std::invalid_argument(fmt::format("unknown argument {}", flag));
    }
  }
  if (a.folder.empty() || !has_command) throw std::invalid_argument("--folder and --command");
  return a;
}

std::string ending_of(const siginfo_t& info) {
  if (info.si_code == CLD_EXITED) return fmt::format("exited with code {}", info.si_status);
  return fmt::format("was killed by signal {} ({})", info.si_status, ::strsignal(info.si_status));
}

// The leader's end, if it has ended, without reaping it: its pid, and so its group's id, stays
// reserved until the group is killed, so that no other process can take it meanwhile.
bool has_ended(pid_t leader, siginfo_t& info) {
  info = {};
  return ::waitid(P_PID, static_cast<id_t>(leader), &info, WEXITED | WNOWAIT | WNOHANG) == 0 &&
         info.si_pid == leader;
}

struct child_process {
  pid_t pid;
  char state;  // 'Z' for one that has ended and waits to be reaped
};

// This process's children, from /proc: as the subreaper of the proposer's processes, its
// children are the leader and every process whose parent ended.
std::vector<child_process> children_of(pid_t parent) {
  std::vector<child_process> out;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return out;
  while (const dirent* entry = ::readdir(proc)) {
    const std::string_view name = entry->d_name;
    if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c));
        })) {
      continue;
    }
    std::ifstream stat(fmt::format("/proc/{}/stat", name));
    std::string line;
    if (!std::getline(stat, line)) continue;
    // "pid (comm) state ppid ...": the command may hold spaces and parentheses.
    const std::size_t close = line.rfind(')');
    if (close == std::string::npos || close + 4 > line.size()) continue;
    char state = 0;
    long ppid = 0;
    if (std::sscanf(line.c_str() + close + 1, " %c %ld", &state, &ppid) != 2) continue;
    if (ppid == parent) out.push_back({static_cast<pid_t>(std::stol(std::string(name))), state});
  }
  ::closedir(proc);
  return out;
}

// Reaps the children that have ended, but not the leader (see has_ended).
void reap_others(pid_t leader) {
  for (;;) {
    siginfo_t info{};
    if (::waitid(P_ALL, 0, &info, WEXITED | WNOWAIT | WNOHANG) != 0 || info.si_pid == 0) return;
    if (info.si_pid == leader) return;
    ::waitpid(info.si_pid, nullptr, 0);
  }
}

struct cleanup {
  std::size_t moved_out = 0;     // processes found outside the leader's group
  std::size_t left_running = 0;  // processes that would not die within kill_patience
};

// Kills the leader's group, then every process that left it (setsid, setpgid), as their
// parents die and they come to the keeper, until none is left. A dying process hands its
// children to the keeper before it shows as ended, but the scan of /proc takes time: a child
// read while its parent lived comes to the keeper after the scan has passed it. So the leader's
// end is looked at before the scan, and only a scan that finds no other child, running or
// ended, says that none is left.
cleanup kill_everything(pid_t leader) {
  std::set<pid_t> outside;
  const auto started = std::chrono::steady_clock::now();
  const pid_t self = ::getpid();
  for (;;) {
    ::kill(-leader, SIGKILL);
    siginfo_t info;
    std::size_t alive = has_ended(leader, info) ? 0 : 1;
    std::size_t reaped = 0;
    for (const child_process& c : children_of(self)) {
      if (c.pid == leader) continue;
      if (c.state == 'Z') {
        reaped += ::waitpid(c.pid, nullptr, WNOHANG) == c.pid ? 1 : 0;
        continue;
      }
      ++alive;
      if (::getpgid(c.pid) != leader) outside.insert(c.pid);
      ::kill(c.pid, SIGKILL);
    }
    if (alive == 0 && reaped == 0) return {.moved_out = outside.size(), .left_running = 0};
    if (std::chrono::steady_clock::now() - started > kill_patience) {
      return {.moved_out = outside.size(), .left_running = alive};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// Copies the proposer's standard error into proposer.log up to the cap; past it, counts.
class capped_log {
 public:
  explicit capped_log(std::size_t cap) : cap_(cap) {}
  // Reads what the pipe has; false at its end.
  bool take(int fd) {
    char chunk[65536];
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0) return errno == EINTR || errno == EAGAIN;
    if (n == 0) return false;
    std::string_view data(chunk, static_cast<std::size_t>(n));
    const std::size_t room = cap_ - std::min(cap_, written_);
    write_all(log_fd, data.substr(0, room));
    written_ += std::min(room, data.size());
    if (data.size() > room) {
      if (dropped_ == 0) {
        write_all(log_fd, fmt::format("\nblaster: the proposer's standard error passed {} bytes; "
                                      "the rest is counted and dropped\n",
                                      cap_));
      }
      dropped_ += data.size() - room;
    }
    return true;
  }
  void close_note() const {
    if (dropped_ > 0) {
      write_all(log_fd, fmt::format("blaster: {} bytes of the proposer's standard error were "
                                    "dropped\n",
                                    dropped_));
    }
  }
  [[nodiscard]] std::size_t dropped() const { return dropped_; }

 private:
  std::size_t cap_;
  std::size_t written_ = 0;
  std::size_t dropped_ = 0;
};

// What the confinement came to, for the session's record.
nlohmann::json confinement_record(int abi) {
  if (abi == 0) {
    return {{"confined", false},
            {"landlock_abi", 0},
            {"why",
             "this kernel has no Landlock (Linux 5.13 or later, with Landlock enabled, has it): "
             "the proposer can write wherever the user can"}};
  }
  return {{"confined", true},
          {"landlock_abi", abi},
          {"read", "what the user can read"},
          {"write", {"its folder", "/dev/null"}},
          {"signals", abi >= 6 ? "to its own processes only"
                               : "to any process of the user (Landlock ABI 6, Linux 6.12, "
                                 "scopes them)"}};
}

// The proposer, between the keeper's fork and exec (the keeper has one thread, so this may
// allocate): its own group, death with the keeper, its folder, the confinement, then sh -c.
[[noreturn]] void become_proposer(const box_arguments& a, pid_t keeper, int stderr_write,
                                  std::vector<std::string> environment) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != keeper) ::_exit(126);  // the keeper died before the line above
  for (const int s : {SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGTERM}) ::signal(s, SIG_DFL);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  nlohmann::json confinement;
  try {
    if (::chdir(a.folder.c_str()) != 0) {
      throw std::runtime_error(
          fmt::format("chdir({}): {}", a.folder.string(), std::strerror(errno)));
    }
    const int abi = confine_files({{"/", file_access::read_execute},
                                   {a.folder, file_access::everything},
                                   {"/dev/null", file_access::read_write}},
                                  /*scope_signals=*/true);
    confinement = confinement_record(abi);
  } catch (const std::exception& e) {
    report({{"event", "failed"}, {"why", e.what()}});
    ::_exit(126);
  }
  report({{"event", "started"}, {"pid", ::getpid()}, {"confinement", confinement}});
  if (::dup2(stderr_write, 2) < 0 || ::close_range(3, ~0U, 0) != 0) ::_exit(126);
  std::vector<char*> envp;
  for (auto& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);
  const char* argv[] = {"sh", "-c", a.command.c_str(), nullptr};
  ::execve("/bin/sh", const_cast<char* const*>(argv), envp.data());
  ::_exit(127);
}

}  // namespace

std::string refused_proposer_variable(const std::string& name) {
  const bool word =
      !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])) &&
      std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
      });
  if (!word) return fmt::format("'{}' is not the name of an environment variable", name);
  if (name.rfind("BLASTER_", 0) == 0) {
    return fmt::format(
        "{}: blaster's own variables never reach the proposer (they name its home); give the "
        "proposer what it needs in its command",
        name);
  }
  if (name == "HOME" || name == "TMPDIR") {
    return fmt::format("{}: the proposer's is its own folder", name);
  }
  return {};
}

std::vector<std::string> proposer_environment(const std::vector<std::string>& parent,
                                              const std::filesystem::path& folder,
                                              const std::vector<std::string>& passed) {
  auto kept = [&](std::string_view name) {
    if (name == "PATH" || name == "LANG" || name == "LANGUAGE" || name == "TZ" || name == "TERM" ||
        name.rfind("LC_", 0) == 0) {
      return true;
    }
    return std::find(passed.begin(), passed.end(), name) != passed.end() &&
           refused_proposer_variable(std::string(name)).empty();
  };
  std::vector<std::string> out;
  bool has_path = false;
  for (const std::string& entry : parent) {
    const std::string_view name = std::string_view(entry).substr(0, entry.find('='));
    if (entry.find('=') == std::string::npos || !kept(name)) continue;
    has_path = has_path || name == "PATH";
    out.push_back(entry);
  }
  if (!has_path) out.emplace_back("PATH=/usr/local/bin:/usr/bin:/bin");
  out.push_back("HOME=" + folder.string());
  out.push_back("TMPDIR=" + folder.string());
  return out;
}

int run_proposer_box(int argc, char** argv) {
  box_arguments a;
  try {
    a = parse_arguments(argc, argv);
  } catch (const std::exception& e) {
    report({{"event", "failed"}, {"why", fmt::format("the keeper's arguments: {}", e.what())}});
    return 2;
  }
  // The keeper ends when blaster says so or is gone, never by a terminal's signals; SIGTERM
  // (someone ending blaster's processes by name) ends it after it has killed the proposer's.
  for (const int s : {SIGINT, SIGHUP, SIGQUIT, SIGPIPE}) ::signal(s, SIG_IGN);
  struct sigaction terminate {};
  terminate.sa_handler = on_terminate;
  ::sigaction(SIGTERM, &terminate, nullptr);
  // Orphans of the proposer's processes come here, not to init: they can be found and killed.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);

  std::vector<std::string> parent;
  for (char** e = environ; *e != nullptr; ++e) parent.emplace_back(*e);
  int err[2];
  if (::pipe2(err, O_CLOEXEC) != 0) {
    report({{"event", "failed"}, {"why", fmt::format("pipe: {}", std::strerror(errno))}});
    return 1;
  }
  const pid_t keeper = ::getpid();
  const pid_t leader = ::fork();
  if (leader == 0) {
    become_proposer(a, keeper, err[1], proposer_environment(parent, a.folder, a.names));
  }
  if (leader < 0) {
    report({{"event", "failed"}, {"why", fmt::format("fork: {}", std::strerror(errno))}});
    return 1;
  }
  ::setpgid(leader, leader);  // also here, so that a kill right away reaches the group
  ::close(err[1]);
  // The proposer's ends of its pipes are its own now: once its processes are gone, blaster
  // sees them close.
  const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  ::dup2(null, input_fd);
  ::dup2(null, output_fd);
  ::close(null);

  capped_log log(a.log_cap);
  bool log_open = true;
  std::string by;
  for (;;) {
    pollfd fds[2] = {{.fd = control_fd, .events = POLLIN, .revents = 0},
                     {.fd = log_open ? err[0] : -1, .events = POLLIN, .revents = 0}};
    ::poll(fds, 2, watch_ms);
    if (terminate_requested != 0) {
      by = "the keeper was sent SIGTERM";
      break;
    }
    if (fds[0].revents != 0) {
      char byte = 0;
      by = ::read(control_fd, &byte, 1) == 1 ? "blaster ended the session"
                                             : "blaster's process ended";
      break;
    }
    if (fds[1].revents != 0) log_open = log.take(err[0]);
    siginfo_t info;
    if (has_ended(leader, info)) {
      by = "it ended by itself";
      break;
    }
    reap_others(leader);
  }

  const cleanup c = kill_everything(leader);
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(leader), &info, WEXITED) != 0 && errno == EINTR) {
  }
  // Every writer of the pipe is gone: its end comes at once, unless a process that escaped
  // still holds it.
  const auto until = std::chrono::steady_clock::now() + log_patience;
  while (log_open && std::chrono::steady_clock::now() < until) {
    pollfd p{.fd = err[0], .events = POLLIN, .revents = 0};
    if (::poll(&p, 1, 100) > 0) log_open = log.take(err[0]);
  }
  log.close_note();
  std::error_code ignored;
  std::filesystem::remove_all(a.folder, ignored);
  nlohmann::json ended = {{"event", "ended"},
                          {"how", ending_of(info)},
                          {"by", by},
                          {"moved_out", c.moved_out},
                          {"left_running", c.left_running},
                          {"log_dropped_bytes", log.dropped()}};
  if (info.si_code == CLD_EXITED) {
    ended["exit_code"] = info.si_status;
  } else {
    ended["signal"] = info.si_status;
  }
  report(ended);
  return 0;
}

}  // namespace blaster
