#include "benchmarking/gate_worker.hpp"

#include <iostream>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "benchmarking/gate_protocol.hpp"
#include "benchmarking/reason_code.hpp"
#include "benchmarking/worker/phase_handler.hpp"
#include "benchmarking/worker/result_channel.hpp"
#include "core/cuda_context.hpp"
#include "core/cuda_driver.hpp"
#include "core/cuda_stream.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"

namespace blaster {

namespace {

// How one request ended, for a worker that serves more: after a failure the worker exits, so that
// nothing a failed evaluation left in the process meets the next one.
enum class request_end { answered, failed };

request_end run_request(const std::filesystem::path& request_file) {
  worker::start_clock();
  worker_result result;
  // Which check was running when something failed: the evidence names it.
  std::optional<std::size_t> current;
  auto fail = [&](reason_code reason, const std::string& message,
                  std::optional<CUresult> code = std::nullopt) {
    result.failure = worker_failure{.reason = reason,
                                    .message = message,
                                    .check = current,
                                    .cuda_error = code ? cuda::error_name(*code) : ""};
    worker::send_result(result);
    return request_end::failed;
  };
  try {
    const worker_request request =
        worker_request_from_json(nlohmann::json::parse(read_file(request_file)));
    worker::send_step("context");
    cuda::context context;
    cuda::stream stream;
    worker::worker_context w(request, context, stream);
    worker::handler_for(request.phase).run(w, result, current);
    worker::send_result(result);
    return request_end::answered;
  } catch (const cuda::gpu_unavailable& e) {
    result.unavailable = e.what();
    worker::send_result(result);
    return request_end::failed;
  } catch (const cuda::cuda_error& e) {
    return fail(reason_for_cuda_error(e.code()), e.what(), e.code());
  } catch (const input_error& e) {
    return fail(reason_code::plan_error, e.what());
  } catch (const std::exception& e) {
    return fail(reason_code::crash, e.what());
  }
}

}  // namespace

int run_gate_worker(const std::filesystem::path& request_file) {
  static_cast<void>(run_request(request_file));
  return 0;
}

int serve_gate_worker() {
  // Each request builds its context and releases it, so that the primary context, and with it
  // every allocation, module and the device heap of one evaluation, is gone before the next.
  for (std::string line; std::getline(std::cin, line);) {
    if (run_request(line) == request_end::failed) return 0;
  }
  return 0;
}

}  // namespace blaster
