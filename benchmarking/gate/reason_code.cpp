#include "benchmarking/gate/reason_code.hpp"

#include <array>
#include <csignal>
#include <utility>

#include "core/worker_process.hpp"

namespace blaster {
namespace {

constexpr std::array<std::pair<reason_code, std::string_view>, 15> names = {{
    {reason_code::none, ""},
    {reason_code::compile_error, "compile_error"},
    {reason_code::plan_error, "plan_error"},
    {reason_code::launch_error, "launch_error"},
    {reason_code::crash, "crash"},
    {reason_code::timeout, "timeout"},
    {reason_code::wrong_result, "wrong_result"},
    {reason_code::nonfinite, "nonfinite"},
    {reason_code::unwritten_output, "unwritten_output"},
    {reason_code::out_of_bounds_write, "out_of_bounds_write"},
    {reason_code::input_modified, "input_modified"},
    {reason_code::nondeterministic, "nondeterministic"},
    {reason_code::stale_in_timing, "stale_in_timing"},
    {reason_code::impossible_speed, "impossible_speed"},
    {reason_code::sanitizer_error, "sanitizer_error"},
}};

}  // namespace

std::string_view to_string(reason_code reason) {
  for (const auto& [code, name] : names) {
    if (code == reason) return name;
  }
  return "?";
}

std::optional<reason_code> parse_reason_code(std::string_view name) {
  for (const auto& [code, known] : names) {
    if (known == name) return code;
  }
  return std::nullopt;
}

reason_code reason_for_cuda_error(CUresult code) {
  switch (code) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
      return reason_code::crash;
    default:
      return reason_code::launch_error;
  }
}

bool stopped_from_outside(const worker_outcome& outcome) {
  if (outcome.how != worker_outcome::ending::signaled) return false;
  return outcome.signal == SIGTERM || outcome.signal == SIGINT || outcome.signal == SIGHUP ||
         outcome.signal == SIGQUIT;
}

reason_code reason_for_worker_ending(const worker_outcome& outcome) {
  return outcome.how == worker_outcome::ending::timed_out ? reason_code::timeout
                                                          : reason_code::crash;
}

}  // namespace blaster
