#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "benchmarking/worker/worker_result.hpp"

namespace blaster::worker {

// The result channel: one JSON document per line on worker_result_fd, each stamped with the
// milliseconds since the worker started, so that the parent can tell where an evaluation's time
// goes. {"step": ...} lines say what the worker is doing (a crash then leaves evidence of where);
// one {"result": ...} line ends it.
void start_clock();
void send_step(const std::string& what, std::optional<std::size_t> check = std::nullopt);
void send_result(const worker_result& result);

}  // namespace blaster::worker
