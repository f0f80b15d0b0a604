#include "benchmarking/worker/gate_worker.hpp"

#include <iostream>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "benchmarking/gate/reason_code.hpp"
#include "benchmarking/worker/detail/phase_handler.hpp"
#include "benchmarking/worker/detail/result_channel.hpp"
#include "benchmarking/worker/gate_protocol.hpp"
#include "core/cuda_context.hpp"
#include "core/cuda_driver.hpp"
#include "core/cuda_module.hpp"
#include "core/cuda_stream.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"

namespace blaster {

namespace {

// How one request ended, for a worker that serves more: after a failure the worker exits, so that
// nothing a failed evaluation left in the process meets the next one; after a candidate that used
// the device heap it exits too, since the heap outlives every module in its context.
enum class request_end { answered, retire, failed };

// The context and stream that a worker's requests run in, made at its first request, and the
// host memory they share.
struct device_session {
  cuda::context context;
  cuda::stream stream;
  worker::host_memory host;
};

request_end run_request(const std::filesystem::path& request_file,
                        std::optional<device_session>& device) {
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
    if (!device) {
      worker::send_step("context");
      device.emplace();
    }
    bool heap = false;
    {
      // Every module and allocation of the evaluation lives in this scope: when the next
      // request starts, only the context, its stream and host memory are left of this one.
      worker::worker_context w(request, device->context, device->stream, device->host);
      worker::handler_for(request.phase).run(w, result, current);
      device->stream.synchronize();
      heap = w.variant != nullptr && cuda::uses_device_heap(module_image(w.variant->compiled));
    }
    result.leaving = heap;
    worker::send_result(result);
    return heap ? request_end::retire : request_end::answered;
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
  std::optional<device_session> device;
  static_cast<void>(run_request(request_file, device));
  return 0;
}

int serve_gate_worker() {
  // One context serves every request: making it costs a quarter of a second, more than a small
  // candidate's whole timing. What an evaluation could leave in it is its own to clean: its
  // modules and buffers go with its scope, every byte a kernel is given is written by the
  // harness before the kernel runs (inputs, poison, canaries), and code that reaches the device
  // heap ends the worker. The host memory it keeps is the parent's files, mapped, and scratch
  // that every download overwrites before it is read.
  std::optional<device_session> device;
  for (std::string line; std::getline(std::cin, line);) {
    if (run_request(line, device) != request_end::answered) return 0;
  }
  return 0;
}

}  // namespace blaster
