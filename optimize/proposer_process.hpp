#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "optimize/proposer_box.hpp"

namespace blaster {

// A proposer: one long-lived child, started once with `sh -c COMMAND` in its box
// (proposer_box.hpp), that reads one request line on its standard input and answers with one
// reply line on its standard output. It is supervised like a worker: a reply that does not come
// by its deadline, or that grows past its cap, ends the proposer (everything it started is
// killed), and so does its exit, even while a process it left behind holds its output open.
class proposer_process {
 public:
  // Makes the box and starts the proposer in it; its standard error is appended to
  // `stderr_log`, up to the box's cap. Throws blaster::error when the box cannot be made (the
  // keeper does not start, or the kernel has Landlock and refuses its rules). A command that
  // starts and exits at once shows on the first ask().
  proposer_process(const std::string& command, const std::filesystem::path& stderr_log,
                   const proposer_box_options& box = {});
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

  [[nodiscard]] bool running() const { return keeper_ > 0 && !ended_; }

  // Ends the proposer and everything it started, if it still runs, and removes its folder.
  // Returns how it ended ("exited with code 0", "was killed by signal 9 (Killed)").
  std::string stop();

  // The box as the session records it: the folder, the names of the proposer's environment,
  // the confinement, and once it has ended, how, by whom, and how many of its processes the
  // keeper found outside its process group.
  [[nodiscard]] const nlohmann::json& record() const { return record_; }

 private:
  // Reads what the keeper has said within `timeout_ms`.
  void read_status(int timeout_ms);
  // Reads and drops what the proposer has written so far, without waiting.
  void drain();
  // Reads what the proposer wrote before it ended, up to `max_bytes` more.
  void take_rest(std::size_t max_bytes);
  answer end(std::string ended, std::string why, double wait_s);
  [[nodiscard]] std::string ended_how() const;

  pid_t keeper_ = -1;
  pid_t leader_ = -1;  // the proposer's pid, and its process group's id
  int to_child_ = -1;
  int from_child_ = -1;
  int control_ = -1;  // to the keeper: closed, it ends the proposer
  int status_ = -1;   // from the keeper
  bool status_closed_ = false;
  std::string status_pending_;
  std::optional<nlohmann::json> started_;
  std::optional<nlohmann::json> ended_;
  std::string failed_;
  std::filesystem::path folder_;
  nlohmann::json record_ = nlohmann::json::object();
  std::string pending_;  // bytes read past the last reply's newline
  std::string gone_;     // why the proposer is no longer running
  std::string gone_code_;
};

}  // namespace blaster
