#include "core/cas_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstring>
#include <system_error>
#include <utility>

#include "core/error.hpp"
#include "core/sha256.hpp"

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
  int get() const { return fd_; }
  // Closes now and reports failure: on some file systems close() is where a write error surfaces.
  void close_checked(const std::filesystem::path& path) {
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0)
      BLASTER_THROW("close({}) failed: {}", path.string(), std::strerror(errno));
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

void validate_digest(std::string_view digest) {
  if (!is_sha256_hex(digest)) {
    BLASTER_INPUT_ERROR("'{}' is not a SHA-256 digest (expected 64 lowercase hex digits)", digest);
  }
}

// A rename or a new entry is durable only once its folder is synced.
void fsync_folder(const std::filesystem::path& folder) {
  const file_descriptor fd(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) BLASTER_THROW("open({}) failed: {}", folder.string(), std::strerror(errno));
  if (::fsync(fd.get()) != 0) {
    BLASTER_THROW("fsync({}) failed: {}", folder.string(), std::strerror(errno));
  }
}

// Creates the folder if needed; returns true when it was created, so its parent needs a sync.
bool make_folder(const std::filesystem::path& folder) {
  if (::mkdir(folder.c_str(), 0755) == 0) return true;
  if (errno == EEXIST) {
    struct stat info {};
    if (::stat(folder.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) return false;
    BLASTER_THROW("{} exists and is not a folder", folder.string());
  }
  BLASTER_THROW("mkdir({}) failed: {}", folder.string(), std::strerror(errno));
}

// Temp names are `<digest>.tmp.<pid>.<random>`: the pid tells whether the writer is still alive.
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

void remove_abandoned_temps(const std::filesystem::path& root) {
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

void write_all(int fd, std::string_view bytes, const std::filesystem::path& path) {
  while (!bytes.empty()) {
    const ssize_t written_bytes = ::write(fd, bytes.data(), bytes.size());
    if (written_bytes < 0) {
      if (errno == EINTR) continue;
      BLASTER_THROW("write({}) failed: {}", path.string(), std::strerror(errno));
    }
    bytes.remove_prefix(static_cast<std::size_t>(written_bytes));
  }
}

}  // namespace

cas_store::cas_store(std::filesystem::path root) : root_(std::move(root)) {
  std::error_code ec;
  std::filesystem::create_directories(root_, ec);
  if (ec) BLASTER_THROW("cannot create the object store {}: {}", root_.string(), ec.message());
  remove_abandoned_temps(root_);
}

std::filesystem::path cas_store::path_of(std::string_view digest) const {
  validate_digest(digest);
  return root_ / digest.substr(0, 2) / digest;
}

bool cas_store::contains(std::string_view digest) const {
  const std::filesystem::path path = path_of(digest);
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) return true;
  if (errno == ENOENT) return false;
  BLASTER_THROW("stat({}) failed: {}", path.string(), std::strerror(errno));
}

std::string cas_store::put(std::string_view bytes) {
  std::string digest = sha256_hex(bytes);
  const std::filesystem::path path = path_of(digest);
  if (contains(digest)) return digest;  // Never overwritten: same name, same bytes.

  const std::filesystem::path folder = path.parent_path();
  if (make_folder(folder)) fsync_folder(root_);

  std::string temp_name =
      (folder / (digest + std::string(temp_marker) + std::to_string(::getpid()) + ".XXXXXX"))
          .string();
  file_descriptor fd(::mkstemp(temp_name.data()));
  if (fd.get() < 0) BLASTER_THROW("mkstemp({}) failed: {}", temp_name, std::strerror(errno));
  const std::filesystem::path temp_path = temp_name;
  temp_file_guard guard(temp_path);

  write_all(fd.get(), bytes, temp_path);
  if (::fchmod(fd.get(), 0444) != 0) {
    BLASTER_THROW("fchmod({}, 0444) failed: {}", temp_name, std::strerror(errno));
  }
  if (::fsync(fd.get()) != 0)
    BLASTER_THROW("fsync({}) failed: {}", temp_name, std::strerror(errno));
  fd.close_checked(temp_path);
  // A concurrent put of the same bytes may rename first; replacing identical bytes is harmless.
  if (::rename(temp_path.c_str(), path.c_str()) != 0) {
    BLASTER_THROW("rename({}, {}) failed: {}", temp_name, path.string(), std::strerror(errno));
  }
  guard.release();
  fsync_folder(folder);
  return digest;
}

std::optional<std::string> cas_store::get(std::string_view digest, bool verify) const {
  const std::filesystem::path path = path_of(digest);
  const file_descriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT) return std::nullopt;
    BLASTER_THROW("open({}) failed: {}", path.string(), std::strerror(errno));
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) {
    BLASTER_THROW("fstat({}) failed: {}", path.string(), std::strerror(errno));
  }
  std::string bytes;
  bytes.reserve(static_cast<std::size_t>(info.st_size));
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
  if (verify) {
    const std::string actual = sha256_hex(bytes);
    if (actual != digest) {
      BLASTER_THROW("{}: the object is corrupted: its bytes hash to {}, not to its name",
                    path.string(), actual);
    }
  }
  return bytes;
}

}  // namespace blaster
