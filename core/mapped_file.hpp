#pragma once

#include <cstddef>
#include <filesystem>
#include <span>

namespace blaster {

// A file mapped into memory, shared with every process that maps it: how the harness hands
// large inputs to a worker process and takes its outputs back without copying them through a
// pipe. The mapping is released with the object; the file stays until its owner removes it.
class mapped_file {
 public:
  enum class access { read_only, read_write };

  // Creates (or truncates) the file at the given size and maps it read-write.
  static mapped_file create(const std::filesystem::path& path, std::size_t bytes);
  // Maps an existing file whole.
  static mapped_file open(const std::filesystem::path& path, access mode);

  mapped_file() = default;
  ~mapped_file();
  mapped_file(const mapped_file&) = delete;
  mapped_file& operator=(const mapped_file&) = delete;
  mapped_file(mapped_file&& other) noexcept;
  mapped_file& operator=(mapped_file&& other) noexcept;

  [[nodiscard]] std::span<std::byte> bytes() const noexcept { return {data_, size_}; }
  [[nodiscard]] std::span<std::byte> slice(std::size_t offset, std::size_t length) const;

 private:
  mapped_file(std::byte* data, std::size_t size) : data_(data), size_(size) {}
  void release() noexcept;

  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace blaster
