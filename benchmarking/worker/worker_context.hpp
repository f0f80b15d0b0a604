#pragma once

#include <cstddef>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "benchmarking/candidate.hpp"
#include "benchmarking/device_compare.hpp"
#include "benchmarking/gate_protocol.hpp"
#include "core/cas_store.hpp"
#include "core/compile_cache.hpp"
#include "core/cuda_context.hpp"
#include "core/cuda_module.hpp"
#include "core/cuda_stream.hpp"
#include "core/mapped_file.hpp"
#include "tasks/task_spec.hpp"

namespace blaster::worker {

// What every phase of one worker shares: the request, the device, and (for the phases that run
// the candidate) the task, the compiled variant and the mapped files of the run's data.
struct worker_context {
  worker_context(const worker_request& r, cuda::context& c, cuda::stream& s)
      : request(r), context(c), stream(s) {}

  const worker_request& request;
  cuda::context& context;
  cuda::stream& stream;
  std::optional<cas_store> cas;
  std::optional<compile_cache> cache;
  task_spec task;
  candidate_file candidate;
  const candidate_variant* variant = nullptr;
  std::optional<cuda::module> module;
  mapped_file inputs;
  mapped_file outputs;
  // Draws each buffer's jitter: where its guard ends and its data begins is new every time.
  std::mt19937_64 placement{std::random_device{}()};
  // Host memory for what is downloaded only to be compared, kept across checks: a fresh
  // vector would be zero-filled and paged in for every download.
  std::vector<std::byte> host;

  std::span<std::byte> host_bytes(std::size_t bytes);
  // [bytes] of one element of the task's buffer; 1 for scratch.
  [[nodiscard]] std::size_t width_of(const std::string& buffer) const;
};

// Loads the task and the variant the parent compiled: the same source bytes, the same label, from
// the compile cache the parent filled.
void load_variant(worker_context& w);
// Maps the run's inputs (read-only) and outputs (written by the gate phase alone).
void map_data(worker_context& w);

// Host comparisons report what the device's do: the first differing element, and how many.
std::optional<device_compare::difference> compare_bytes(std::span<const std::byte> a,
                                             std::span<const std::byte> b, std::size_t width);

}  // namespace blaster::worker
