#pragma once

// `blaster serve --http PORT`: the same requests and answers as serve's standard input, over
// HTTP on the loopback address only. POST /v1/evaluate takes one request (the reply format of
// optimize/PROTOCOL.md) and answers with its verdict; POST /v1/stop ends serving. Connections are
// read concurrently, but candidates are judged one at a time, in the order their requests
// arrived whole: the GPU's queue. A client that leaves before its request is whole is dropped
// unjudged; one that leaves while its request waits or is judged still has it judged and
// recorded. One request per connection (the answer closes it).

#include <atomic>
#include <cstdint>
#include <string>

#include "optimize/protocol.hpp"
#include "optimize/serve_loop.hpp"

namespace blaster {

class judging_session;

struct http_limits {
  std::size_t max_header_bytes = 16 * 1024;
  std::size_t max_body_bytes = max_request_bytes;  // as a line of serve's standard input
  int read_timeout_s = 30;                       // a client that stalls mid-request is dropped
  int max_connections = 64;                      // beyond them a client is told 503
};

class http_front {
 public:
  // Listens on 127.0.0.1:`port` (0: a free port, see port()).
  explicit http_front(std::uint16_t port, http_limits limits = {});
  ~http_front();
  http_front(const http_front&) = delete;
  http_front& operator=(const http_front&) = delete;

  [[nodiscard]] std::uint16_t port() const { return port_; }

  // Serves until POST /v1/stop or stop(); then waits for the requests under way. The outcome
  // counts what was judged.
  serve_outcome run(judging_session& session, const reply_limits& limits);
  // From any thread or a signal handler: serving ends after the requests under way.
  void stop() noexcept;

 private:
  int listener_ = -1;
  int wake_[2] = {-1, -1};  // a byte here ends the accept loop
  std::uint16_t port_ = 0;
  http_limits limits_;
  std::atomic<bool> stopping_{false};
};

}  // namespace blaster
