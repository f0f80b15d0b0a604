#include "core/device_buffer.hpp"

#include <utility>

#include "core/cuda_driver.hpp"

namespace blaster::cuda {

device_buffer::device_buffer(std::size_t bytes) : bytes_(bytes) {
  // A zero-byte buffer still gets a distinct address so that argument packing stays uniform.
  check(driver().cuMemAlloc(&pointer_, bytes == 0 ? 1 : bytes),
        fmt::format("cuMemAlloc({} bytes)", bytes));
}

device_buffer::~device_buffer() { release(); }

device_buffer::device_buffer(device_buffer&& other) noexcept
    : pointer_(std::exchange(other.pointer_, 0)), bytes_(std::exchange(other.bytes_, 0)) {}

device_buffer& device_buffer::operator=(device_buffer&& other) noexcept {
  if (this != &other) {
    release();
    pointer_ = std::exchange(other.pointer_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void device_buffer::release() noexcept {
  if (pointer_ != 0) driver().cuMemFree(pointer_);  // no-throw: a destructor may run unwinding
  pointer_ = 0;
}

void device_buffer::upload(std::span<const std::byte> host, std::size_t offset_bytes) {
  if (offset_bytes + host.size() > bytes_) BLASTER_THROW("upload past the end of a buffer");
  check(driver().cuMemcpyHtoD(pointer_ + offset_bytes, host.data(), host.size()),
        fmt::format("cuMemcpyHtoD({} bytes)", host.size()));
}

void device_buffer::upload_async(std::span<const std::byte> host, CUstream stream,
                                 std::size_t offset_bytes) {
  if (offset_bytes + host.size() > bytes_) BLASTER_THROW("upload past the end of a buffer");
  check(driver().cuMemcpyHtoDAsync(pointer_ + offset_bytes, host.data(), host.size(), stream),
        fmt::format("cuMemcpyHtoDAsync({} bytes)", host.size()));
}

void device_buffer::copy_to_async(CUdeviceptr destination, CUstream stream) const {
  check(driver().cuMemcpyDtoDAsync(destination, pointer_, bytes_, stream),
        fmt::format("cuMemcpyDtoDAsync({} bytes)", bytes_));
}

void device_buffer::download(std::span<std::byte> host, std::size_t offset_bytes) const {
  if (offset_bytes + host.size() > bytes_) BLASTER_THROW("download past the end of a buffer");
  check(driver().cuMemcpyDtoH(host.data(), pointer_ + offset_bytes, host.size()),
        fmt::format("cuMemcpyDtoH({} bytes)", host.size()));
}

void device_buffer::fill_u8(unsigned char value, CUstream stream) {
  check(driver().cuMemsetD8Async(pointer_, value, bytes_, stream), "cuMemsetD8Async");
}

void device_buffer::fill_u16(unsigned short value, CUstream stream) {
  check(driver().cuMemsetD16Async(pointer_, value, bytes_ / 2, stream), "cuMemsetD16Async");
}

void device_buffer::fill_u32(unsigned int value, CUstream stream) {
  check(driver().cuMemsetD32Async(pointer_, value, bytes_ / 4, stream), "cuMemsetD32Async");
}

}  // namespace blaster::cuda
