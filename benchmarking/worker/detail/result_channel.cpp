#include "benchmarking/worker/detail/result_channel.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string_view>

#include "core/worker_process.hpp"

namespace blaster::worker {
namespace {

std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();

void send(nlohmann::json message) {
  message["ms"] =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  const std::string line = message.dump() + "\n";
  std::string_view rest = line;
  while (!rest.empty()) {
    const ssize_t n = ::write(worker_result_fd, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ::_exit(3);  // the parent is gone; nobody is left to tell
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

void start_clock() { started = std::chrono::steady_clock::now(); }

void send_step(const std::string& what, std::optional<std::size_t> check) {
  nlohmann::json j = {{"step", what}};
  if (check) j["check"] = *check;
  send(std::move(j));
}

void send_result(const worker_result& result) { send({{"result", to_json(result)}}); }

}  // namespace blaster::worker
