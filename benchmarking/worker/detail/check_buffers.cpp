#include "benchmarking/worker/detail/check_buffers.hpp"

#include "core/cuda_driver.hpp"

namespace blaster::worker {
namespace {

void set_pattern(CUdeviceptr at, std::size_t bytes, std::uint32_t pattern, std::size_t width,
                 CUstream stream) {
  const cuda::driver_api& api = cuda::driver();
  if (bytes == 0) return;
  if (width == 2) {
    cuda::check(
        api.cuMemsetD16Async(at, static_cast<unsigned short>(pattern & 0xFFFFU), bytes / 2, stream),
        "cuMemsetD16Async");
  } else if (width == 1) {
    cuda::check(api.cuMemsetD8Async(at, static_cast<unsigned char>(pattern & 0xFFU), bytes, stream),
                "cuMemsetD8Async");
  } else {
    cuda::check(api.cuMemsetD32Async(at, pattern, bytes / 4, stream), "cuMemsetD32Async");
  }
}

// [bytes] the width the poison of a buffer repeats at: its element's where that is 2, else the
// widest that divides it.
std::size_t poison_width(dtype type, std::size_t bytes) {
  return size_of(type) == 2 ? 2 : (bytes % 4 == 0 ? 4 : 1);
}

// [bytes] the plan's scratch buffers of a set.
std::size_t scratch_bytes(const check_buffers& b) {
  std::size_t bytes = 0;
  for (const auto& name : b.scratch) bytes += b.buffers.at(name).bytes();
  return bytes;
}

}  // namespace

check_buffers allocate_check(worker_context& w, const gate_check& check, const resolved_plan& plan,
                             std::size_t canary_bytes) {
  const task_case& c = w.task.find_case(check.case_name);
  check_buffers out;
  std::uniform_int_distribution<std::size_t> jitter(0, 31);
  auto add = [&](const std::string& name, std::size_t bytes) -> cuda::guarded_buffer& {
    const cuda::guard_layout layout{.canary_bytes = canary_bytes,
                                    .guard_bytes = w.request.guard_bytes,
                                    .jitter_granules = jitter(w.placement)};
    auto [it, inserted] = out.buffers.try_emplace(name, w.context.device(), bytes, layout);
    it->second.fill_canaries(w.request.canary_pattern, w.stream.get());
    out.pointers[name] = it->second.data();
    return it->second;
  };
  for (const auto& b : w.task.buffers) {
    add(b.name, static_cast<std::size_t>(w.task.buffer_bytes(b, c)));
    if (b.role == buffer_role::output) out.output_types[b.name] = b.type;
  }
  for (const auto& [name, bytes] : plan.scratch) {
    add(name, static_cast<std::size_t>(bytes));
    out.scratch.insert(name);
    out.output_types[name] = dtype::i32;  // scratch is poisoned with the integer pattern
  }
  // In stream order: the canaries first, then the inputs in the middle of them.
  assign_inputs(w, check, out);
  return out;
}

void upload_inputs(worker_context& w, const gate_check& check, check_buffers& b) {
  for (const auto& slot : check.inputs) {
    b.buffers.at(slot.buffer)
        .upload_async(w.inputs->slice(slot.offset, slot.bytes), w.stream.get());
  }
}

kept_inputs::kept_inputs(worker_context& w, const gate_check& check) : check_(check) {
  std::size_t bytes = 0;
  for (const auto& slot : check.inputs) bytes += slot.bytes;
  std::size_t free = 0;
  std::size_t total = 0;
  cuda::check(cuda::driver().cuMemGetInfo(&free, &total), "cuMemGetInfo");
  if (bytes == 0 || bytes > free / 2) return;
  for (const auto& slot : check.inputs) {
    copies_.emplace_back(slot.bytes);
    copies_.back().upload_async(w.inputs->slice(slot.offset, slot.bytes), w.stream.get());
  }
}

void kept_inputs::restore(worker_context& w, check_buffers& b) const {
  if (!on_device()) {
    upload_inputs(w, check_, b);
    return;
  }
  for (std::size_t i = 0; i < copies_.size(); ++i) {
    copies_[i].copy_to_async(b.buffers.at(check_.inputs[i].buffer).data(), w.stream.get());
  }
}

void assign_inputs(worker_context& w, const gate_check& check, check_buffers& b) {
  b.restore.clear();
  for (const auto& slot : check.inputs) {
    if (w.task.find_buffer(slot.buffer)->role == buffer_role::inout) {
      b.restore[slot.buffer] = w.inputs->slice(slot.offset, slot.bytes);
    }
  }
  upload_inputs(w, check, b);
}

check_buffers allocate_check(worker_context& w, const gate_check& check,
                             const resolved_plan& plan) {
  return allocate_check(w, check, plan, w.request.canary_bytes);
}

// inout buffers hold what was drawn again, in stream order.
void restore_inout(worker_context& w, check_buffers& b) {
  for (const auto& [name, bytes] : b.restore)
    b.buffers.at(name).upload_async(bytes, w.stream.get());
}

void poison(worker_context& w, check_buffers& b) {
  restore_inout(w, b);
  poison_outputs(w, b);
}

void poison_outputs(worker_context& w, const check_buffers& b) {
  for (const auto& [name, type] : b.output_types) {
    const cuda::guarded_buffer& buffer = b.buffers.at(name);
    set_pattern(buffer.data(), buffer.bytes(), poison_pattern(type, w.request.poison_seed),
                poison_width(type, buffer.bytes()), w.stream.get());
  }
}

void poison(worker_context& w, check_buffers& b, const pattern_fill& fill) {
  restore_inout(w, b);
  poison_outputs(w, b, fill, w.stream.get());
}

void poison_outputs(worker_context& w, const check_buffers& b, const pattern_fill& fill,
                    CUstream stream) {
  for (const auto& [name, type] : b.output_types) {
    const cuda::guarded_buffer& buffer = b.buffers.at(name);
    const std::uint32_t word = repeated_word(poison_pattern(type, w.request.poison_seed),
                                             poison_width(type, buffer.bytes()));
    fill(buffer.data(), buffer.bytes(), word, stream);
  }
}

std::size_t poisoned_bytes(const check_buffers& b) {
  std::size_t bytes = 0;
  for (const auto& [name, type] : b.output_types) bytes += b.buffers.at(name).bytes();
  for (const auto& [name, drawn] : b.restore) bytes += drawn.size();
  return bytes;
}

std::size_t footprint_bytes(const check_buffers& b) {
  std::size_t bytes = 0;
  for (const auto& [name, buffer] : b.buffers) bytes += buffer.bytes();
  return bytes - scratch_bytes(b);
}

std::vector<canary_hit> changed_canaries(const worker_context& w, const check_buffers& b) {
  std::vector<canary_hit> hits;
  for (const auto& [name, buffer] : b.buffers) {
    if (auto offset = buffer.changed_canary(w.request.canary_pattern)) {
      hits.push_back({.buffer = name,
                      .byte_offset = static_cast<long long>(*offset),
                      .bytes = buffer.bytes()});
    }
  }
  return hits;
}

void settle(worker_context& w) { w.stream.synchronize(); }

}  // namespace blaster::worker
