#pragma once

#include <cuda.h>

#include <cstddef>
#include <span>

namespace blaster::cuda {

// Device memory owned by one object; copy deleted, move transfers ownership.
class device_buffer {
 public:
  device_buffer() = default;
  explicit device_buffer(std::size_t bytes);
  ~device_buffer();
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  device_buffer(device_buffer&& other) noexcept;
  device_buffer& operator=(device_buffer&& other) noexcept;

  [[nodiscard]] CUdeviceptr get() const noexcept { return pointer_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }

  void upload(std::span<const std::byte> host, std::size_t offset_bytes = 0);
  // Ordered on the stream, so that a stream synchronize covers it (a plain upload runs on the
  // legacy stream, which the harness's non-blocking stream does not wait for).
  void upload_async(std::span<const std::byte> host, CUstream stream, std::size_t offset_bytes = 0);
  void download(std::span<std::byte> host, std::size_t offset_bytes = 0) const;
  // Its bytes to `destination` (as many), on the device, in stream order.
  void copy_to_async(CUdeviceptr destination, CUstream stream) const;
  // Fills in stream order (the legacy default stream when none is given).
  void fill_u8(unsigned char value, CUstream stream = nullptr);
  void fill_u16(unsigned short value, CUstream stream = nullptr);  // bytes a multiple of 2
  void fill_u32(unsigned int value, CUstream stream = nullptr);    // bytes a multiple of 4

 private:
  void release() noexcept;

  CUdeviceptr pointer_ = 0;
  std::size_t bytes_ = 0;
};

}  // namespace blaster::cuda
