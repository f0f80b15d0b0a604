#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace blaster {

// A proposer: one long-lived child, started once with `sh -c COMMAND`, that reads one request
// line on its standard input and answers with one reply line on its standard output. It runs in
// its own process group, inherits no descriptor but the two pipes and a log of its standard
// error, and is supervised like a worker: a reply that does not come by its deadline, or that
// grows past its cap, ends the proposer (the whole group is killed), and so does its exit.
class proposer_process {
 public:
  // Starts the child; its standard error is appended to `stderr_log`. A command that cannot be
  // started at all throws blaster::error; one that starts and exits at once shows on the first
  // ask().
  proposer_process(const std::string& command, const std::filesystem::path& stderr_log,
                   const std::filesystem::path& working_directory = {});
  ~proposer_process();
  proposer_process(const proposer_process&) = delete;
  proposer_process& operator=(const proposer_process&) = delete;

  // What one ask() brought back: the reply line (without its newline), or why there is none.
  struct answer {
    std::optional<std::string> line;
    // When there is no line: "proposer_timeout", "proposer_flood" or "proposer_exited", and the
    // same in words ("no reply within 300.0 s", "exited with code 1 before replying").
    std::string ended;
    std::string why;
    double wait_s = 0.0;  // [seconds] from the request's last byte to the reply's
  };

  // Writes `request` and a newline, then waits for one line of at most `max_bytes`. After an
  // answer without a line the proposer is gone and every later ask() says so at once.
  answer ask(std::string_view request, std::chrono::milliseconds deadline, std::size_t max_bytes);

  [[nodiscard]] bool running() const { return pid_ > 0; }

 private:
  // Reads and drops what the proposer has written so far, without waiting.
  void drain();
  // Kills the group, reaps the child and describes how it ended.
  std::string stop();
  answer end(std::string ended, std::string why, double wait_s);

  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  std::string pending_;  // bytes read past the last reply's newline
  std::string gone_;     // why the proposer is no longer running
  std::string gone_code_;
};

}  // namespace blaster
