#include "core/file_io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "core/error.hpp"

namespace blaster {
namespace {

class file_descriptor {
 public:
  explicit file_descriptor(int fd) : fd_(fd) {}
  ~file_descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  file_descriptor(const file_descriptor&) = delete;
  file_descriptor& operator=(const file_descriptor&) = delete;
  [[nodiscard]] int get() const noexcept { return fd_; }

 private:
  int fd_;
};

[[noreturn]] void throw_errno(std::string_view what, const std::filesystem::path& path) {
  BLASTER_THROW("{} {}: {}", what, path.string(), std::strerror(errno));
}

}  // namespace

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) BLASTER_INPUT_ERROR("{}: cannot read: {}", path.string(), std::strerror(errno));
  std::ostringstream content;
  content << in.rdbuf();
  return std::move(content).str();
}

void write_file_atomically(const std::filesystem::path& path, std::string_view bytes) {
  const auto folder = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  std::filesystem::create_directories(folder);
  std::random_device entropy;
  const auto temporary = folder / fmt::format("{}.tmp.{:08x}", path.filename().string(), entropy());
  {
    file_descriptor out(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (out.get() < 0) throw_errno("cannot create", temporary);
    for (std::size_t written = 0; written < bytes.size();) {
      const ssize_t n = ::write(out.get(), bytes.data() + written, bytes.size() - written);
      if (n < 0) {
        if (errno == EINTR) continue;
        const int saved = errno;
        ::unlink(temporary.c_str());
        errno = saved;
        throw_errno("cannot write", temporary);
      }
      written += static_cast<std::size_t>(n);
    }
    if (::fsync(out.get()) != 0) throw_errno("cannot fsync", temporary);
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(temporary.c_str());
    errno = saved;
    throw_errno("cannot rename into", path);
  }
  file_descriptor dir(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() >= 0) ::fsync(dir.get());
}

}  // namespace blaster
