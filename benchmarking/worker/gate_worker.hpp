#pragma once

#include <filesystem>

namespace blaster {

// The worker side of the gate: `blaster __worker REQUEST` runs this in a child process that the
// harness supervises. It reads the request, does the phase's GPU work, writes its answer on
// worker_result_fd and returns the process exit code. Everything the candidate's kernels do
// happens in this process, so a fault or a hang ends only it.
int run_gate_worker(const std::filesystem::path& request_file);

// `blaster __worker --serve`: the same for one request file per line of standard input, each
// answered on worker_result_fd in turn, until the input ends or a request fails (a failed
// evaluation may leave the process in any state; the parent starts a new worker).
int serve_gate_worker();

}  // namespace blaster
