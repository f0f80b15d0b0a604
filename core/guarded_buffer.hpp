#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace blaster::cuda {

// How a guarded_buffer surrounds its data.
struct guard_layout {
  // [bytes] at least this much mapped memory before and after the data, filled with a canary
  // pattern and checked after the kernels ran: a stray write there is found with its offset.
  std::size_t canary_bytes = 4096;
  // [bytes] beyond the canaries, address space reserved on each side and left unmapped: any
  // access there faults, so a write far past a buffer cannot land silently in another.
  std::size_t guard_bytes = std::size_t{64} << 20U;
  // Extra unmapped allocation granules before the mapping, so that the distance from one buffer
  // to another is not something a kernel can learn once and rely on.
  std::size_t jitter_granules = 0;
};

// Device memory through the driver's virtual memory API: [guard | canaries, data, canaries |
// guard], where only the middle part is mapped. The data ends within 256 bytes of the mapping's
// last canary byte and starts 256-byte aligned. Copy deleted, move transfers ownership.
class guarded_buffer {
 public:
  guarded_buffer(CUdevice device, std::size_t bytes, const guard_layout& layout);
  ~guarded_buffer();
  guarded_buffer(const guarded_buffer&) = delete;
  guarded_buffer& operator=(const guarded_buffer&) = delete;
  guarded_buffer(guarded_buffer&& other) noexcept;
  guarded_buffer& operator=(guarded_buffer&& other) noexcept;

  [[nodiscard]] CUdeviceptr data() const noexcept { return mapped_ + data_offset_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }
  // [bytes] mapped memory around the data, before and after it.
  [[nodiscard]] std::size_t canary_before() const noexcept { return data_offset_; }
  [[nodiscard]] std::size_t canary_after() const noexcept {
    return mapped_bytes_ - data_offset_ - bytes_;
  }

  // Fills the whole mapping, data included, with the pattern, in stream order.
  void fill_canaries(std::uint32_t pattern, CUstream stream);
  // The first byte offset, relative to the data's start, where a canary no longer holds the
  // pattern: negative before the data, at or past bytes() after it. Synchronous.
  [[nodiscard]] std::optional<long long> changed_canary(std::uint32_t pattern) const;

  void upload_async(std::span<const std::byte> host, CUstream stream);
  void download(std::span<std::byte> host) const;

 private:
  void release() noexcept;

  CUdeviceptr reserved_ = 0;
  std::size_t reserved_bytes_ = 0;
  CUdeviceptr mapped_ = 0;
  std::size_t mapped_bytes_ = 0;
  CUmemGenericAllocationHandle handle_ = 0;
  std::size_t data_offset_ = 0;  // [bytes] from mapped_
  std::size_t bytes_ = 0;
};

}  // namespace blaster::cuda
