#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "benchmarking/candidate/candidate.hpp"
#include "benchmarking/timing/device_compare.hpp"
#include "benchmarking/worker/gate_protocol.hpp"
#include "core/cas_store.hpp"
#include "core/compile_cache.hpp"
#include "core/cuda_context.hpp"
#include "core/cuda_module.hpp"
#include "core/cuda_stream.hpp"
#include "core/mapped_file.hpp"
#include "tasks/task_spec.hpp"

namespace blaster::worker {

// Host memory that a worker keeps from one request to the next: the run's data files stay mapped
// while requests name the same files, and the scratch for downloads stays paged in. A page is
// faulted in at its first touch: the 134 MB of a large output cost a fifth of a second so, per
// request, in a mapping made afresh.
class host_memory {
 public:
  enum class role { inputs, outputs };

  // The file mapped whole: the mapping the last request of this role had where it is the same
  // file (device, inode, size) in the same mode, else a new one in its place.
  const mapped_file& map(role r, const std::filesystem::path& path, mapped_file::access mode);
  std::span<std::byte> scratch(std::size_t bytes);

 private:
  struct kept_file {
    std::uint64_t device = 0;
    std::uint64_t inode = 0;
    std::uint64_t bytes = 0;
    mapped_file::access mode = mapped_file::access::read_only;
    mapped_file file;
  };
  std::array<std::optional<kept_file>, 2> files_;
  // A fresh vector would be zero-filled and paged in for every download.
  std::vector<std::byte> scratch_;
};

// What every phase of one worker shares: the request, the device, and (for the phases that run
// the candidate) the task, the compiled variant and the mapped files of the run's data.
struct worker_context {
  worker_context(const worker_request& r, cuda::context& c, cuda::stream& s, host_memory& h)
      : request(r), context(c), stream(s), host(h) {}

  const worker_request& request;
  cuda::context& context;
  cuda::stream& stream;
  host_memory& host;
  std::optional<cas_store> cas;
  std::optional<compile_cache> cache;
  task_spec task;
  candidate_file candidate;
  const candidate_variant* variant = nullptr;
  std::optional<cuda::module> module;
  const mapped_file* inputs = nullptr;
  const mapped_file* outputs = nullptr;
  // Draws each buffer's jitter: where its guard ends and its data begins is new every time.
  std::mt19937_64 placement{std::random_device{}()};
  // Host memory for what is downloaded only to be compared.
  std::span<std::byte> host_bytes(std::size_t bytes) { return host.scratch(bytes); }
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
                                                        std::span<const std::byte> b,
                                                        std::size_t width);

}  // namespace blaster::worker
