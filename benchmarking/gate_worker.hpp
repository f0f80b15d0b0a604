#pragma once

#include <filesystem>

namespace blaster {

// The worker side of the gate: `blaster __worker REQUEST` runs this in a child process that the
// harness supervises. It reads the request, does the phase's GPU work, writes its answer on
// worker_result_fd and returns the process exit code. Everything the candidate's kernels do
// happens in this process, so a fault or a hang ends only it.
int run_gate_worker(const std::filesystem::path& request_file);

}  // namespace blaster
