// blaster serve over HTTP with the stand-in judge (no GPU): answers, refusals of what is not a
// request, the queue that judges concurrent requests in arrival order, and clients that leave.
#include "optimize/http_front.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "evidence/store.hpp"
#include "optimize/judging_session.hpp"
#include "optimize/optimization_memory.hpp"
#include "optimize/stand_in_judge.hpp"
#include "optimize/temp_home.hpp"

namespace blaster {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

int connect_to(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

struct http_answer {
  int status = 0;
  json body;
};

// Sends `text` and reads the answer until the server closes the connection.
http_answer exchange(std::uint16_t port, const std::string& text) {
  const int fd = connect_to(port);
  if (fd < 0) return {};
  static_cast<void>(::send(fd, text.data(), text.size(), MSG_NOSIGNAL));
  std::string reply;
  char chunk[4096];
  for (ssize_t n; (n = ::recv(fd, chunk, sizeof(chunk), 0)) > 0;) {
    reply.append(chunk, static_cast<std::size_t>(n));
  }
  ::close(fd);
  http_answer a;
  if (reply.size() > 12) a.status = std::stoi(reply.substr(9, 3));
  const std::size_t body = reply.find("\r\n\r\n");
  if (body != std::string::npos) a.body = json::parse(reply.substr(body + 4), nullptr, false);
  return a;
}

// A POST as a client of this machine sends it, with `headers` ("Name: value\r\n" each) beside
// the length.
std::string post(const std::string& path, const std::string& body,
                 const std::string& headers = "Content-Type: application/json\r\n") {
  return "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

// What the server answered to `text`, and how long it took; the client sends nothing more.
std::pair<http_answer, std::chrono::milliseconds> timed_exchange(std::uint16_t port,
                                                                 const std::string& text) {
  const auto started = std::chrono::steady_clock::now();
  const http_answer a = exchange(port, text);
  return {a, std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::steady_clock::now() - started)};
}

std::string with_id(const std::string& request, int id) {
  json j = json::parse(request);
  j["id"] = id;
  return j.dump();
}

class HttpFront : public ::testing::Test {
 protected:
  void SetUp() override {
    session_.emplace(records_, judge_, "blaster serve --task rmsnorm --http 0",
                     task_brief{.name = "rmsnorm",
                                .title = "RMSNorm",
                                .contract = json::object(),
                                .baseline_source = "/* blaster baseline */",
                                .timed_case = "canonical",
                                .shape = "B=16",
                                .dtype = "f16"},
                     home_.path() / "serve");
    served_ = std::async(std::launch::async, [this] { return front_.run(*session_, {}); });
  }
  serve_outcome finish() {
    front_.stop();
    const serve_outcome o = served_.get();
    session_->finish(o.ended, o.why, "serve");
    return o;
  }

  testing::temp_home home_{"http"};
  store records_{home_.path() / "home"};
  stand_in_judge judge_;
  std::optional<judging_session> session_;
  http_front front_{0};
  std::future<serve_outcome> served_;
};

TEST_F(HttpFront, ARequestIsAnsweredWithItsVerdictAndWhatIsNotOneIsRefused) {
  const http_answer ok =
      exchange(front_.port(), post("/v1/evaluate", with_id(candidate("FAST 2.0", "one pass"), 4)));
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(ok.body.at("id"), 4);
  EXPECT_EQ(ok.body.at("status"), "ok");
  EXPECT_DOUBLE_EQ(ok.body.at("reward").get<double>(), 1.96);
  EXPECT_EQ(ok.body.at("step"), 1);

  const http_answer invalid = exchange(front_.port(), post("/v1/evaluate", "{not json"));
  EXPECT_EQ(invalid.status, 200);
  EXPECT_EQ(invalid.body.at("reason"), "invalid_reply");  // a step, as on standard input

  EXPECT_EQ(exchange(front_.port(), post("/v1/other", "{}")).status, 404);
  EXPECT_EQ(exchange(front_.port(), "GET /v1/evaluate HTTP/1.1\r\n\r\n").status, 405);
  EXPECT_EQ(
      exchange(front_.port(), "POST /v1/evaluate HTTP/1.1\r\nContent-Length: x\r\n\r\n").status,
      400);
  EXPECT_EQ(exchange(front_.port(),
                     "POST /v1/evaluate HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
                .status,
            400);
  EXPECT_EQ(exchange(front_.port(), "nonsense\r\n\r\n").status, 400);
  const serve_outcome o = finish();
  EXPECT_EQ(o.ended, "stopped");
  EXPECT_EQ(o.judged, 2);
  EXPECT_EQ(optimization_memory(records_).steps_of(session_->run_id()).size(), 2U);
}

TEST_F(HttpFront, ConcurrentRequestsAreJudgedOneAtATimeInArrivalOrder) {
  auto slow = std::async(std::launch::async, [&] {
    return exchange(front_.port(), post("/v1/evaluate", with_id(candidate("SLOW 400", "s"), 1)));
  });
  // Once the slow one is being judged, the fast one arrives.
  for (int i = 0; i < 500 && judge_.started.load() == 0; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(judge_.started.load(), 1);
  const auto asked = std::chrono::steady_clock::now();
  const http_answer fast =
      exchange(front_.port(), post("/v1/evaluate", with_id(candidate("FAST 1.5", "f"), 2)));
  EXPECT_GE(std::chrono::steady_clock::now() - asked, 200ms) << "it waited for its turn";
  EXPECT_EQ(fast.body.at("step"), 2);
  EXPECT_EQ(slow.get().body.at("step"), 1);
  EXPECT_EQ(finish().judged, 2);
}

TEST_F(HttpFront, AClientThatLeavesMidRequestIsDroppedAndServingGoesOn) {
  const int fd = connect_to(front_.port());
  const std::string partial = "POST /v1/evaluate HTTP/1.1\r\nContent-Length: 500\r\n\r\n{\"sou";
  static_cast<void>(::send(fd, partial.data(), partial.size(), MSG_NOSIGNAL));
  ::close(fd);
  const http_answer after =
      exchange(front_.port(), post("/v1/evaluate", candidate("FAST 2.0", "after")));
  EXPECT_EQ(after.body.at("step"), 1);
  const serve_outcome o = finish();
  EXPECT_EQ(judge_.evaluations, 1);
  EXPECT_NE(o.why.find("1 request left by its client before whole, dropped unjudged"),
            std::string::npos)
      << o.why;
}

TEST_F(HttpFront, AClientThatLeavesWhileJudgedStillHasItsStepRecorded) {
  const int fd = connect_to(front_.port());
  const std::string request = post("/v1/evaluate", candidate("SLOW 200", "left"));
  static_cast<void>(::send(fd, request.data(), request.size(), MSG_NOSIGNAL));
  std::this_thread::sleep_for(50ms);
  ::close(fd);  // gone before the answer
  std::this_thread::sleep_for(300ms);
  // Stopping through the API waits for it.
  EXPECT_EQ(exchange(front_.port(), post("/v1/stop", "")).body.at("stopping"), true);
  const serve_outcome o = served_.get();
  session_->finish(o.ended, o.why, "serve");
  EXPECT_EQ(o.judged, 1);
  const auto steps = optimization_memory(records_).steps_of(session_->run_id());
  ASSERT_EQ(steps.size(), 1U);
  EXPECT_EQ(steps[0].hypothesis, "left");
}

// What the README promises: a POST to /v1/evaluate needs a Content-Length, and what is not
// HTTP, or has two lengths that disagree, is refused at once, never judged nor waited on.
TEST_F(HttpFront, MalformedRequestsAreRefusedAtOnce) {
  const auto no_length = exchange(
      front_.port(),
      "POST /v1/evaluate HTTP/1.1\r\nContent-Type: application/json\r\n\r\n" +
          candidate("FAST 2.0", "no length"));
  EXPECT_EQ(no_length.status, 400);
  EXPECT_NE(no_length.body.at("error").get<std::string>().find("Content-Length"),
            std::string::npos);

  // Garbage (a TLS hello) with no blank line: answered without waiting for the read timeout.
  const auto [garbage, garbage_ms] =
      timed_exchange(front_.port(), std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11));
  EXPECT_EQ(garbage.status, 400);
  EXPECT_LT(garbage_ms.count(), 5000);
  EXPECT_EQ(exchange(front_.port(), "GARBAGE\r\n\r\n").status, 400);
  EXPECT_EQ(exchange(front_.port(), "POST /v1/evaluate FTP/9\r\n\r\n").status, 400);

  // Two lengths that disagree, and no body sent: refused at once.
  const auto [two, two_ms] = timed_exchange(
      front_.port(),
      "POST /v1/evaluate HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: "
      "10\r\nContent-Length: 500\r\n\r\n");
  EXPECT_EQ(two.status, 400);
  EXPECT_NE(two.body.at("error").get<std::string>().find("disagree"), std::string::npos);
  EXPECT_LT(two_ms.count(), 5000);

  // Two that agree are one length.
  const std::string body = candidate("FAST 2.0", "agreed");
  EXPECT_EQ(exchange(front_.port(),
                     "POST /v1/evaluate HTTP/1.1\r\nContent-Type: application/json\r\n"
                     "Content-Length: " +
                         std::to_string(body.size()) + "\r\nContent-Length: " +
                         std::to_string(body.size()) + "\r\n\r\n" + body)
                .status,
            200);
  EXPECT_EQ(finish().judged, 1);
}

// A web page the user opens must not be able to post candidates or stop serving: a body that
// is not JSON by its Content-Type (a form) and a foreign Origin are refused; this machine's own
// clients, with a loopback Origin or none, are served.
TEST_F(HttpFront, WebPagesCannotPostCandidates) {
  const std::string body = candidate("FAST 2.0", "from a page");
  EXPECT_EQ(exchange(front_.port(),
                     post("/v1/evaluate", body,
                          "Content-Type: application/x-www-form-urlencoded\r\n"))
                .status,
            415);
  EXPECT_EQ(exchange(front_.port(), post("/v1/evaluate", body, "")).status, 415);
  EXPECT_EQ(exchange(front_.port(), post("/v1/evaluate", body, "Content-Type: text/plain\r\n"))
                .status,
            415);
  for (const char* origin : {"http://evil.example", "null", "http://127.0.0.1.evil.example",
                             "http://localhost.evil.example:80", "file://"}) {
    EXPECT_EQ(exchange(front_.port(),
                       post("/v1/evaluate", body,
                            fmt::format("Content-Type: application/json\r\nOrigin: {}\r\n",
                                        origin)))
                  .status,
              403)
        << origin;
  }
  EXPECT_EQ(exchange(front_.port(), post("/v1/stop", "", "Origin: http://evil.example\r\n"))
                .status,
            403)
      << "nor stop serving";
  EXPECT_EQ(judge_.evaluations, 0);

  for (const std::string& origin :
       {std::string("http://127.0.0.1:") + std::to_string(front_.port()),
        std::string("http://localhost:") + std::to_string(front_.port()),
        std::string("http://[::1]:") + std::to_string(front_.port())}) {
    const auto ok = exchange(
        front_.port(),
        post("/v1/evaluate", body,
             "Content-Type: application/json; charset=utf-8\r\nOrigin: " + origin + "\r\n"));
    EXPECT_EQ(ok.status, 200) << origin;
  }
  EXPECT_EQ(finish().judged, 3);
}

TEST(HttpFrontPort, APortInUseIsABadInputThatNamesIt) {
  http_front first(0);
  try {
    http_front second(first.port());
    FAIL() << "two servers on one port";
  } catch (const input_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot listen on 127.0.0.1:"), std::string::npos);
  }
}

}  // namespace
}  // namespace blaster
