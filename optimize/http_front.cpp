#include "optimize/http_front.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "optimize/judging_session.hpp"

namespace blaster {
namespace {

struct http_request {
  std::string method;
  std::string path;
  std::optional<std::size_t> content_length;
  std::optional<std::string> content_type;
  std::optional<std::string> origin;
  std::string body;
};

enum class read_outcome { whole, gone, bad };

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trimmed(std::string_view s) {
  const std::size_t first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const std::size_t last = s.find_last_not_of(" \t");
  return std::string(s.substr(first, last - first + 1));
}

// [bytes] the longest request line taken: a method, a path and a version.
constexpr std::size_t max_request_line_bytes = 8192;

// Why the bytes so far cannot begin an HTTP request, or an empty string: checked as they arrive,
// so that garbage is answered at once instead of when the client gives up.
std::string not_a_request_line(std::string_view data) {
  const std::size_t end = data.find('\n');
  const std::string_view line = data.substr(0, end);
  for (std::size_t i = 0; i < line.size(); ++i) {
    const auto c = static_cast<unsigned char>(line[i]);
    const bool last_cr = c == '\r' && end != std::string_view::npos && i + 1 == line.size();
    if ((c < 0x20 || c > 0x7E) && !last_cr) {
      return fmt::format("byte 0x{:02X} in the request line: this is not HTTP", c);
    }
  }
  if (end == std::string_view::npos) {
    if (line.size() > max_request_line_bytes) {
      return fmt::format("the request line passes {} bytes", max_request_line_bytes);
    }
    return {};
  }
  const std::string text = trimmed(line.substr(0, line.size() - (line.ends_with('\r') ? 1 : 0)));
  const std::size_t sp1 = text.find(' ');
  const std::size_t sp2 = sp1 == std::string::npos ? sp1 : text.find(' ', sp1 + 1);
  const bool method_ok =
      sp1 != std::string::npos && sp1 > 0 &&
      std::all_of(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(sp1),
                  [](char c) { return c >= 'A' && c <= 'Z'; });
  if (!method_ok || sp2 == std::string::npos || text[sp1 + 1] != '/' ||
      (text.substr(sp2 + 1) != "HTTP/1.1" && text.substr(sp2 + 1) != "HTTP/1.0")) {
    return "the request line is not METHOD /PATH HTTP/1.x";
  }
  return {};
}

// One request: the request line, headers up to a blank line, then Content-Length bytes of body.
// `problem` says what is wrong with a bad one.
read_outcome read_request(int fd, const http_limits& limits, http_request& request,
                          std::string& problem) {
  std::string data;
  std::size_t header_end = std::string::npos;
  char chunk[8192];
  while (header_end == std::string::npos) {
    const ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
    if (n <= 0) return read_outcome::gone;  // closed, reset, or silent past the timeout
    data.append(chunk, static_cast<std::size_t>(n));
    problem = not_a_request_line(data);
    if (!problem.empty()) return read_outcome::bad;
    header_end = data.find("\r\n\r\n");
    if (header_end == std::string::npos && data.size() > limits.max_header_bytes) {
      problem = fmt::format("the request's headers pass {} bytes", limits.max_header_bytes);
      return read_outcome::bad;
    }
  }
  const std::string head = data.substr(0, header_end);
  const std::size_t line_end = head.find("\r\n");
  const std::string line = head.substr(0, line_end);
  const std::size_t sp1 = line.find(' ');
  const std::size_t sp2 = line.find(' ', sp1 + 1);
  request.method = line.substr(0, sp1);
  request.path = line.substr(sp1 + 1, sp2 - sp1 - 1);
  for (std::size_t at = line_end; at != std::string::npos && at < head.size();) {
    const std::size_t next = head.find("\r\n", at + 2);
    const std::string header =
        head.substr(at + 2, next == std::string::npos ? std::string::npos : next - at - 2);
    at = next;
    const std::size_t colon = header.find(':');
    if (colon == std::string::npos || colon == 0) {
      problem = "a header line has no NAME: value";
      return read_outcome::bad;
    }
    const std::string name = lower(header.substr(0, colon));
    const std::string value = trimmed(std::string_view(header).substr(colon + 1));
    if (name == "transfer-encoding") {
      problem = "chunked bodies are not taken; send Content-Length";
      return read_outcome::bad;
    }
    if (name == "content-type") request.content_type = value;
    if (name == "origin") request.origin = value;
    if (name != "content-length") continue;
    std::size_t n = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size()) {
      problem = "Content-Length is not a number";
      return read_outcome::bad;
    }
    // Two lengths that disagree leave the body's end unknown: refused at once, never waited on.
    if (request.content_length && *request.content_length != n) {
      problem = fmt::format("two Content-Length headers disagree ({} and {})",
                            *request.content_length, n);
      return read_outcome::bad;
    }
    request.content_length = n;
  }
  const std::size_t length = request.content_length.value_or(0);
  if (length > limits.max_body_bytes) {
    problem = too_large_request(length, limits.max_body_bytes);
    return read_outcome::bad;
  }
  request.body = data.substr(header_end + 4);
  while (request.body.size() < length) {
    const ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
    if (n <= 0) return read_outcome::gone;  // left mid-request
    request.body.append(chunk, static_cast<std::size_t>(n));
  }
  request.body.resize(length);
  return read_outcome::whole;
}

// Whether an Origin header names this machine's loopback: a page a browser loaded from
// elsewhere sends its own origin, and must not be able to post candidates or stop serving.
bool loopback_origin(const std::string& origin) {
  std::string_view rest = origin;
  if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else if (rest.starts_with("https://")) {
    rest.remove_prefix(8);
  } else {
    return false;  // "null" (a file or a sandboxed frame), or another scheme
  }
  std::string_view host = rest;
  if (host.starts_with("[::1]")) {
    rest.remove_prefix(5);
  } else {
    const std::size_t colon = rest.find(':');
    host = rest.substr(0, colon);
    if (lower(std::string(host)) != "localhost" && host != "127.0.0.1") return false;
    rest.remove_prefix(host.size());
  }
  if (rest.empty()) return true;
  return rest.size() > 1 && rest[0] == ':' &&
         std::all_of(rest.begin() + 1, rest.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool json_content_type(const std::optional<std::string>& type) {
  if (!type) return false;
  return lower(trimmed(std::string_view(*type).substr(0, type->find(';')))) == "application/json";
}

// Writes everything, or as much as a client still reading takes; never raises SIGPIPE.
void send_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::send(fd, text.data(), text.size(), MSG_NOSIGNAL);
    if (n <= 0) return;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

void respond(int fd, int status, std::string_view reason, const nlohmann::json& body) {
  const std::string text = body.dump() + "\n";
  send_all(fd, fmt::format("HTTP/1.1 {} {}\r\nContent-Type: application/json\r\nContent-Length: "
                           "{}\r\nConnection: close\r\n\r\n{}",
                           status, reason, text.size(), text));
}

// Turns in the order tickets were taken: requests are judged in the order they arrived whole.
class ticket_queue {
 public:
  std::uint64_t take() {
    const std::lock_guard lock(mutex_);
    return next_++;
  }
  void wait_for(std::uint64_t ticket) {
    std::unique_lock lock(mutex_);
    turn_.wait(lock, [&] { return serving_ == ticket; });
  }
  void done() {
    {
      const std::lock_guard lock(mutex_);
      ++serving_;
    }
    turn_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable turn_;
  std::uint64_t next_ = 0;
  std::uint64_t serving_ = 0;
};

}  // namespace

http_front::http_front(std::uint16_t port, http_limits limits) : limits_(limits) {
  listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener_ < 0) BLASTER_THROW("socket: {}", std::strerror(errno));
  const int yes = 1;
  ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);  // never reachable from another machine
  address.sin_port = htons(port);
  if (::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::listen(listener_, limits_.max_connections) != 0) {
    const int e = errno;
    ::close(listener_);
    BLASTER_INPUT_ERROR("--http {}: cannot listen on 127.0.0.1:{}: {}; choose another port", port,
                        port, std::strerror(e));
  }
  socklen_t size = sizeof(address);
  ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &size);
  port_ = ntohs(address.sin_port);
  if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
    ::close(listener_);
    BLASTER_THROW("pipe2: {}", std::strerror(errno));
  }
}

http_front::~http_front() {
  for (const int fd : {listener_, wake_[0], wake_[1]}) {
    if (fd >= 0) ::close(fd);
  }
}

void http_front::stop() noexcept {
  stopping_ = true;
  const char byte = 1;
  static_cast<void>(::write(wake_[1], &byte, 1));  // async-signal-safe
}

serve_outcome http_front::run(judging_session& session, const reply_limits& limits) {
  serve_outcome outcome;
  ticket_queue queue;
  std::mutex active_mutex;
  std::condition_variable idle;
  int active = 0;
  int dropped = 0;  // requests their clients left before they were whole

  auto handle = [&](int fd) {
    const timeval timeout{.tv_sec = limits_.read_timeout_s, .tv_usec = 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    http_request request;
    std::string problem;
    const read_outcome read = read_request(fd, limits_, request, problem);
    if (read == read_outcome::gone) {
      const std::lock_guard lock(active_mutex);
      ++dropped;
    } else if (read == read_outcome::bad) {
      respond(fd, 400, "Bad Request", {{"error", problem}});
    } else if (request.path != "/v1/evaluate" && request.path != "/v1/stop") {
      respond(fd, 404, "Not Found",
              {{"error", fmt::format("no {}; POST /v1/evaluate or /v1/stop", request.path)}});
    } else if (request.method != "POST") {
      respond(fd, 405, "Method Not Allowed", {{"error", "POST is the only method"}});
    } else if (request.path == "/v1/evaluate" && !request.content_length) {
      respond(fd, 400, "Bad Request",
              {{"error", "a request to /v1/evaluate needs a Content-Length"}});
    } else if (request.origin && !loopback_origin(*request.origin)) {
      respond(fd, 403, "Forbidden",
              {{"error", fmt::format("a request from origin {} is refused: only this machine's "
                                     "own clients, with no Origin or a loopback one, are served",
                                     *request.origin)}});
    } else if (request.path == "/v1/evaluate" && !json_content_type(request.content_type)) {
      respond(fd, 415, "Unsupported Media Type",
              {{"error", "the body must come as Content-Type: application/json (a form a web "
                         "page posts is refused)"}});
    } else if (request.path == "/v1/stop") {
      stop();
      respond(fd, 200, "OK", {{"stopping", true}});
    } else {
      const std::uint64_t ticket = queue.take();
      queue.wait_for(ticket);
      nlohmann::json answer;
      int status = 200;
      try {
        const parsed_reply reply = parse_reply(request.body, limits);
        if (std::holds_alternative<stop_request>(reply)) {
          stop();
          answer = {{"stopping", true}};
        } else if (outcome.ended == "no_gpu") {
          status = 503;
          answer = {{"error", "no GPU to judge it: " + session.cannot_judge()}};
        } else {
          answer = answer_request(session, request.body, reply);
          ++outcome.judged;
          if (answer.at("status") == "unjudged") {
            outcome.ended = "no_gpu";
            outcome.why = session.cannot_judge();
            stop();
          }
        }
      } catch (const std::exception& e) {
        // The machine or the store failed: nothing more is judged.
        status = 500;
        answer = {{"error", e.what()}};
        outcome.ended = "failed";
        outcome.why = e.what();
        stop();
      }
      queue.done();
      respond(fd, status,
              status == 200   ? "OK"
              : status == 503 ? "Service Unavailable"
                              : "Internal Server Error",
              answer);
    }
    ::close(fd);
    // Notified under the lock: once it is released, run() may return and end these locals.
    const std::lock_guard lock(active_mutex);
    --active;
    idle.notify_all();
  };

  while (!stopping_) {
    pollfd fds[2] = {{.fd = listener_, .events = POLLIN, .revents = 0},
                     {.fd = wake_[0], .events = POLLIN, .revents = 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents != 0 || stopping_) break;
    const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    {
      const std::lock_guard lock(active_mutex);
      if (active >= limits_.max_connections) {
        respond(fd, 503, "Service Unavailable",
                {{"error", fmt::format("{} requests are under way; try again", active)}});
        ::close(fd);
        continue;
      }
      ++active;
    }
    std::thread(handle, fd).detach();
  }
  std::unique_lock lock(active_mutex);
  idle.wait(lock, [&] { return active == 0; });
  if (outcome.ended.empty()) {
    outcome.ended = "stopped";
    outcome.why = fmt::format("serving over HTTP ended after {} request{}", outcome.judged,
                              outcome.judged == 1 ? "" : "s");
  }
  if (dropped > 0) {
    outcome.why += fmt::format("; {} request{} left by {} client{} before whole, dropped unjudged",
                               dropped, dropped == 1 ? "" : "s", dropped == 1 ? "its" : "their",
                               dropped == 1 ? "" : "s");
  }
  return outcome;
}

}  // namespace blaster
