#include "core/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "core/error.hpp"

namespace blaster {
namespace {

std::byte* map(int fd, std::size_t bytes, bool writable, const std::filesystem::path& path) {
  if (bytes == 0) return nullptr;
  void* p =
      ::mmap(nullptr, bytes, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    BLASTER_THROW("mmap({}, {} bytes): {}", path.string(), bytes, std::strerror(errno));
  }
  return static_cast<std::byte*>(p);
}

}  // namespace

mapped_file mapped_file::create(const std::filesystem::path& path, std::size_t bytes) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) BLASTER_THROW("cannot create {}: {}", path.string(), std::strerror(errno));
  // The blocks are reserved now: a file sized by ftruncate alone is sparse, and on a full disk
  // the first store into its mapping would end the process with SIGBUS instead of an error.
  if (const int failed = bytes == 0 ? 0 : ::posix_fallocate(fd, 0, static_cast<off_t>(bytes));
      failed != 0) {
    ::close(fd);
    ::unlink(path.c_str());
    BLASTER_THROW("cannot reserve {} bytes for {}: {}", bytes, path.string(),
                  std::strerror(failed));
  }
  std::byte* data = nullptr;
  try {
    data = map(fd, bytes, true, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);  // the mapping keeps the file
  return {data, bytes};
}

mapped_file mapped_file::open(const std::filesystem::path& path, access mode) {
  const bool writable = mode == access::read_write;
  const int fd = ::open(path.c_str(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) BLASTER_THROW("cannot open {}: {}", path.string(), std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int saved = errno;
    ::close(fd);
    BLASTER_THROW("cannot stat {}: {}", path.string(), std::strerror(saved));
  }
  const auto bytes = static_cast<std::size_t>(info.st_size);
  std::byte* data = nullptr;
  try {
    data = map(fd, bytes, writable, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return {data, bytes};
}

mapped_file::~mapped_file() { release(); }

mapped_file::mapped_file(mapped_file&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

mapped_file& mapped_file::operator=(mapped_file&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

std::span<std::byte> mapped_file::slice(std::size_t offset, std::size_t length) const {
  if (offset > size_ || length > size_ - offset) {
    BLASTER_THROW("a slice [{}, +{}) past the end of a {}-byte mapping", offset, length, size_);
  }
  return {data_ + offset, length};
}

void mapped_file::release() noexcept {
  if (data_ != nullptr) ::munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace blaster
