#include "core/guarded_buffer.hpp"

#include <utility>
#include <vector>

#include "core/cuda_driver.hpp"

namespace blaster::cuda {
namespace {

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

CUmemAllocationProp device_memory(CUdevice device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  return prop;
}

// The first byte of `bytes` (read from the device at `at`) that is not the pattern, where the
// pattern's phase is that of `absolute`, the first byte's offset from a 4-byte aligned start.
std::optional<std::size_t> first_change(CUdeviceptr at, std::size_t bytes, std::size_t absolute,
                                        std::uint32_t pattern) {
  if (bytes == 0) return std::nullopt;
  std::vector<std::byte> host(bytes);
  check(driver().cuMemcpyDtoH(host.data(), at, bytes), "cuMemcpyDtoH (canaries)");
  for (std::size_t i = 0; i < bytes; ++i) {
    const auto expected = static_cast<std::byte>((pattern >> (8 * ((absolute + i) % 4))) & 0xFFU);
    if (host[i] != expected) return i;
  }
  return std::nullopt;
}

}  // namespace

guarded_buffer::guarded_buffer(CUdevice device, std::size_t bytes, const guard_layout& layout)
    : bytes_(bytes) {
  const driver_api& api = driver();
  const CUmemAllocationProp prop = device_memory(device);
  std::size_t granule = 0;
  check(api.cuMemGetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
        "cuMemGetAllocationGranularity");
  const std::size_t canary = round_up(layout.canary_bytes, 256);
  const std::size_t padded = round_up(bytes, 256);
  mapped_bytes_ = round_up(canary + padded + canary, granule);
  // The data as late in the mapping as the after-canary allows: a write just past the end
  // meets the canary, one farther meets the unmapped guard.
  data_offset_ = mapped_bytes_ - canary - padded;
  const std::size_t guard = round_up(layout.guard_bytes, granule);
  const std::size_t jitter = layout.jitter_granules * granule;
  reserved_bytes_ = jitter + guard + mapped_bytes_ + guard;
  try {
    check(api.cuMemAddressReserve(&reserved_, reserved_bytes_, granule, 0, 0),
          fmt::format("cuMemAddressReserve({} bytes)", reserved_bytes_));
    check(api.cuMemCreate(&handle_, mapped_bytes_, &prop, 0),
          fmt::format("cuMemCreate({} bytes)", mapped_bytes_));
    const CUdeviceptr at = reserved_ + jitter + guard;
    check(api.cuMemMap(at, mapped_bytes_, 0, handle_, 0), "cuMemMap");
    mapped_ = at;
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    check(api.cuMemSetAccess(mapped_, mapped_bytes_, &access, 1), "cuMemSetAccess");
  } catch (...) {
    release();
    throw;
  }
}

guarded_buffer::~guarded_buffer() { release(); }

guarded_buffer::guarded_buffer(guarded_buffer&& other) noexcept
    : reserved_(std::exchange(other.reserved_, 0)),
      reserved_bytes_(std::exchange(other.reserved_bytes_, 0)),
      mapped_(std::exchange(other.mapped_, 0)),
      mapped_bytes_(std::exchange(other.mapped_bytes_, 0)),
      handle_(std::exchange(other.handle_, 0)),
      data_offset_(std::exchange(other.data_offset_, 0)),
      bytes_(std::exchange(other.bytes_, 0)) {}

guarded_buffer& guarded_buffer::operator=(guarded_buffer&& other) noexcept {
  if (this != &other) {
    release();
    reserved_ = std::exchange(other.reserved_, 0);
    reserved_bytes_ = std::exchange(other.reserved_bytes_, 0);
    mapped_ = std::exchange(other.mapped_, 0);
    mapped_bytes_ = std::exchange(other.mapped_bytes_, 0);
    handle_ = std::exchange(other.handle_, 0);
    data_offset_ = std::exchange(other.data_offset_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void guarded_buffer::release() noexcept {
  // No-throw: a destructor may run while unwinding, and after a fault the calls may fail.
  const driver_api& api = driver();
  if (mapped_ != 0) api.cuMemUnmap(mapped_, mapped_bytes_);
  if (handle_ != 0) api.cuMemRelease(handle_);
  if (reserved_ != 0) api.cuMemAddressFree(reserved_, reserved_bytes_);
  mapped_ = 0;
  handle_ = 0;
  reserved_ = 0;
}

void guarded_buffer::fill_canaries(std::uint32_t pattern, CUstream stream) {
  check(driver().cuMemsetD32Async(mapped_, pattern, mapped_bytes_ / 4, stream),
        "cuMemsetD32Async (canaries)");
}

std::optional<long long> guarded_buffer::changed_canary(std::uint32_t pattern) const {
  if (auto i = first_change(mapped_, data_offset_, 0, pattern)) {
    return static_cast<long long>(*i) - static_cast<long long>(data_offset_);
  }
  const std::size_t end = data_offset_ + bytes_;
  if (auto i = first_change(mapped_ + end, mapped_bytes_ - end, end, pattern)) {
    return static_cast<long long>(bytes_ + *i);
  }
  return std::nullopt;
}

void guarded_buffer::upload_async(std::span<const std::byte> host, CUstream stream) {
  if (host.size() > bytes_) BLASTER_THROW("upload past the end of a guarded buffer");
  check(driver().cuMemcpyHtoDAsync(data(), host.data(), host.size(), stream),
        fmt::format("cuMemcpyHtoDAsync({} bytes)", host.size()));
}

void guarded_buffer::download(std::span<std::byte> host) const {
  if (host.size() > bytes_) BLASTER_THROW("download past the end of a guarded buffer");
  check(driver().cuMemcpyDtoH(host.data(), data(), host.size()),
        fmt::format("cuMemcpyDtoH({} bytes)", host.size()));
}

}  // namespace blaster::cuda
