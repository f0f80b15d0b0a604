#include "core/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>
#include <utility>

#include "core/error.hpp"

namespace blaster {
namespace {

constexpr std::string_view temp_marker = ".tmp.";

// Owns a file descriptor; close errors matter only where we check them explicitly.
class file_descriptor {
 public:
  explicit file_descriptor(int fd) : fd_(fd) {}
  ~file_descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  file_descriptor(const file_descriptor&) = delete;
  file_descriptor& operator=(const file_descriptor&) = delete;
  [[nodiscard]] int get() const { return fd_; }
  // Closes now and reports failure: on some file systems close() is where a write error surfaces.
  void close_checked(const std::filesystem::path& path) {
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) {
      BLASTER_THROW("close({}) failed: {}", path.string(), write_failure(errno));
    }
  }

 private:
  int fd_;
};

// Removes the temp file unless the write that owns it got to its rename.
class temp_file_guard {
 public:
  explicit temp_file_guard(std::filesystem::path path) : path_(std::move(path)) {}
  ~temp_file_guard() {
    if (!released_) ::unlink(path_.c_str());
  }
  temp_file_guard(const temp_file_guard&) = delete;
  temp_file_guard& operator=(const temp_file_guard&) = delete;
  void release() { released_ = true; }

 private:
  std::filesystem::path path_;
  bool released_ = false;
};

void write_all(int fd, std::string_view bytes, const std::filesystem::path& path) {
  while (!bytes.empty()) {
    const ssize_t written_bytes = ::write(fd, bytes.data(), bytes.size());
    if (written_bytes < 0) {
      if (errno == EINTR) continue;
      BLASTER_THROW("write({}) failed: {}", path.string(), write_failure(errno));
    }
    bytes.remove_prefix(static_cast<std::size_t>(written_bytes));
  }
}

// The pid in `<name>.tmp.<pid>.<random>` tells whether the writer is still alive.
bool is_abandoned_temp(const std::string& name) {
  const std::size_t marker = name.find(temp_marker);
  if (marker == std::string::npos) return false;
  const std::string_view rest = std::string_view(name).substr(marker + temp_marker.size());
  pid_t pid = 0;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), pid);
  if (ec != std::errc{} || end == rest.data() || pid <= 0) return true;  // Not ours to keep.
  // Signal 0 only probes: ESRCH means no such process (EPERM: alive, someone else's).
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

}  // namespace

std::string write_failure(int code) {
  std::string text = std::strerror(code);
  switch (code) {
    case ENOSPC:
    case EDQUOT:
      return text + "; the disk is full: free some space or pick another folder, and run again";
    case EROFS:
    case EACCES:
    case EPERM:
      return text + "; the folder is not writable: fix its permissions or pick another folder";
    case EFBIG:
      return text + "; the file size limit (ulimit -f) was reached: raise it and run again";
    default:
      return text;
  }
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) BLASTER_INPUT_ERROR("{}: cannot read: {}", path.string(), std::strerror(errno));
  std::ostringstream content;
  content << in.rdbuf();
  return std::move(content).str();
}

std::optional<std::string> read_file_if_exists(const std::filesystem::path& path) {
  const file_descriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT) return std::nullopt;
    BLASTER_THROW("open({}) failed: {}", path.string(), std::strerror(errno));
  }
  std::string bytes;
  char chunk[1 << 16];
  for (;;) {
    const ssize_t got_bytes = ::read(fd.get(), chunk, sizeof chunk);
    if (got_bytes < 0) {
      if (errno == EINTR) continue;
      BLASTER_THROW("read({}) failed: {}", path.string(), std::strerror(errno));
    }
    if (got_bytes == 0) break;
    bytes.append(chunk, static_cast<std::size_t>(got_bytes));
  }
  return bytes;
}

void fsync_folder(const std::filesystem::path& folder) {
  const file_descriptor fd(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) BLASTER_THROW("open({}) failed: {}", folder.string(), write_failure(errno));
  if (::fsync(fd.get()) != 0) {
    BLASTER_THROW("fsync({}) failed: {}", folder.string(), write_failure(errno));
  }
}

void write_file_atomically(const std::filesystem::path& path, std::string_view bytes, mode_t mode) {
  const std::filesystem::path folder =
      path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  std::string temp_name =
      path.string() + std::string(temp_marker) + std::to_string(::getpid()) + ".XXXXXX";
  file_descriptor fd(::mkstemp(temp_name.data()));
  if (fd.get() < 0) BLASTER_THROW("mkstemp({}) failed: {}", temp_name, write_failure(errno));
  const std::filesystem::path temp_path = temp_name;
  temp_file_guard guard(temp_path);

  write_all(fd.get(), bytes, path);
  if (::fchmod(fd.get(), mode) != 0) {
    BLASTER_THROW("fchmod({}, {:o}) failed: {}", temp_name, mode, write_failure(errno));
  }
  if (::fsync(fd.get()) != 0) {
    BLASTER_THROW("fsync({}) failed: {}", temp_name, write_failure(errno));
  }
  fd.close_checked(temp_path);
  if (::rename(temp_path.c_str(), path.c_str()) != 0) {
    BLASTER_THROW("rename({}, {}) failed: {}", temp_name, path.string(), write_failure(errno));
  }
  guard.release();
  fsync_folder(folder);
}

void remove_abandoned_temp_files(const std::filesystem::path& root) {
  std::error_code ec;
  std::filesystem::recursive_directory_iterator it(root, ec);
  if (ec) BLASTER_THROW("cannot list {}: {}", root.string(), ec.message());
  for (const std::filesystem::recursive_directory_iterator end; it != end; it.increment(ec)) {
    if (ec) BLASTER_THROW("cannot list {}: {}", root.string(), ec.message());
    const std::filesystem::path& path = it->path();
    std::error_code type_ec;  // A file that vanished meanwhile is simply skipped.
    if (!it->is_regular_file(type_ec) || !is_abandoned_temp(path.filename().string())) continue;
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      BLASTER_THROW("unlink({}) failed: {}", path.string(), std::strerror(errno));
    }
  }
  if (ec) BLASTER_THROW("cannot list {}: {}", root.string(), ec.message());
}

}  // namespace blaster
