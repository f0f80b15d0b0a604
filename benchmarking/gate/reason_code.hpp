#pragma once

#include <cuda.h>

#include <optional>
#include <string_view>

namespace blaster {

struct worker_outcome;

// Every way a candidate can fail, from compiling to timing. Declared in the order a reviewer
// reads them; the gate reports the first failure it finds in its own order of checks.
enum class reason_code {
  none,
  compile_error,        // NVRTC refused the source, or a planned kernel is not in it
  plan_error,           // the launch plan is malformed or does not fit the task or the kernel
  launch_error,         // the driver refused a launch (configuration, resources)
  crash,                // the kernel faulted (illegal address, trap) or the worker died
  timeout,              // the evaluation outlived its deadline and was killed
  wrong_result,         // an element outside atol + rtol*|reference|
  nonfinite,            // NaN or Inf where the reference is finite
  unwritten_output,     // an output element still holds the poison pattern
  out_of_bounds_write,  // a canary or guard before or after a buffer was written
  input_modified,       // an input buffer differs from what was uploaded
  nondeterministic,     // five runs on the same inputs are not bitwise identical
  stale_in_timing,      // a timed launch did not do the work: its output is not the checked
                        // one, or it is faster when its output already holds the answer
  impossible_speed,     // faster than the roofline floor of where its data lives
  sanitizer_error,      // compute-sanitizer (--sanitize) reported an error
};

std::string_view to_string(reason_code reason);
std::optional<reason_code> parse_reason_code(std::string_view name);

// A failed CUDA call: errors after which the context is dead are crashes; anything else the
// driver says about a launch is a launch error.
reason_code reason_for_cuda_error(CUresult code);

// A worker that did not report a result: killed at its deadline, or ended some other way.
reason_code reason_for_worker_ending(const worker_outcome& outcome);

// A worker ended by a signal that only someone outside sends: SIGTERM, SIGINT, SIGHUP or SIGQUIT,
// as an operator's kill or a scheduler's scancel does. blaster kills its workers with SIGKILL, and
// a kernel's fault ends one with a CUDA error, SIGSEGV, SIGBUS or SIGABRT: a stop like this is no
// verdict on the candidate, and the run stops instead. A SIGKILL's sender is unknown: a crash.
bool stopped_from_outside(const worker_outcome& outcome);

}  // namespace blaster
