#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "benchmarking/candidate/kernel_binding.hpp"
#include "benchmarking/gate/gate_result.hpp"
#include "benchmarking/timing/pattern_fill.hpp"
#include "benchmarking/worker/detail/worker_context.hpp"
#include "benchmarking/worker/gate_protocol.hpp"
#include "core/device_buffer.hpp"
#include "core/dtype.hpp"
#include "core/guarded_buffer.hpp"

namespace blaster::worker {

// Everything a check needs on the device: the task's buffers and the plan's scratch, each
// between unmapped guards with canaries inside them.
struct check_buffers {
  std::map<std::string, cuda::guarded_buffer, std::less<>> buffers;
  std::map<std::string, CUdeviceptr, std::less<>> pointers;
  std::map<std::string, dtype, std::less<>> output_types;  // outputs and scratch, to poison
  // inout buffers and their drawn bytes, which poisoning writes back instead of a pattern: what
  // the last launch left there is as unknown to the next one as an output's bytes.
  std::map<std::string, std::span<const std::byte>, std::less<>> restore;
  std::set<std::string, std::less<>> scratch;  // the plan's buffers among `buffers`
};

// The check's buffers with canaries of `canary_bytes` (the request's, or the whole guard where a
// fault is being located), the inputs uploaded into them, in stream order.
check_buffers allocate_check(worker_context& w, const gate_check& check, const resolved_plan& plan,
                             std::size_t canary_bytes);
check_buffers allocate_check(worker_context& w, const gate_check& check, const resolved_plan& plan);

// The check's inputs, from the run's inputs file, again (in stream order).
void upload_inputs(worker_context& w, const gate_check& check, check_buffers& b);
// A check's inputs kept on the device, where they fit in half of its free memory, so that putting
// them back before each of many passes is a device copy rather than an upload, which reads every
// byte from the inputs file's pageable mapping each time. Where they do not fit, restore()
// uploads them.
class kept_inputs {
 public:
  kept_inputs(worker_context& w, const gate_check& check);
  // Every input of the check, inout buffers included, into `b` again (in stream order).
  void restore(worker_context& w, check_buffers& b) const;
  [[nodiscard]] bool on_device() const noexcept { return !copies_.empty(); }

 private:
  const gate_check& check_;
  std::vector<cuda::device_buffer> copies_;  // one per input slot, or none
};

// Makes the set `check`'s: its inputs uploaded, and its inout buffers' drawn bytes what
// poisoning writes back from now on. Another check of the same case fits the same buffers.
void assign_inputs(worker_context& w, const gate_check& check, check_buffers& b);

// Outputs and scratch get the run's poison pattern, which no kernel can know in advance, and
// inout buffers their drawn bytes again.
void poison(worker_context& w, check_buffers& b);
// Outputs and scratch alone get the pattern: for a set whose inputs were just restored.
void poison_outputs(worker_context& w, const check_buffers& b);
// The same bytes, written by the harness's fill kernel: what a timed comparison of launches
// writes, so that its two sides do the same work before their launches.
void poison(worker_context& w, check_buffers& b, const pattern_fill& fill);
// Outputs and scratch alone, by the fill kernel on `stream`: what a mode that poisons before
// every launch puts before each launch of a run, where the inout buffers hold the run's own
// inputs (another draw's, copied there).
void poison_outputs(worker_context& w, const check_buffers& b, const pattern_fill& fill,
                    CUstream stream);

// [bytes] what poison() writes: every output, scratch and inout buffer of a set.
std::size_t poisoned_bytes(const check_buffers& b);
// [bytes] the task's buffers of a set: never the plan's scratch. The candidate sizes its
// scratch, so nothing the timing infers about the caches (how many sets span the L2) may grow
// with it.
std::size_t footprint_bytes(const check_buffers& b);

// The canaries that changed, each with its buffer and byte offset.
std::vector<canary_hit> changed_canaries(const worker_context& w, const check_buffers& b);

// Every fill and upload goes on the harness's stream, in order; waiting for it here makes the
// setup's cost, and any error in it, show before the first launch rather than in it.
void settle(worker_context& w);

}  // namespace blaster::worker
