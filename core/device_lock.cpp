#include "core/device_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "core/error.hpp"

namespace blaster {

std::vector<std::string> visible_devices() {
  std::vector<std::string> entries;
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (visible == nullptr || *visible == '\0') return entries;
  std::string_view rest = visible;
  while (true) {
    std::string_view item = rest.substr(0, rest.find(','));
    const std::size_t next = item.size() + 1;
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front())))
      item.remove_prefix(1);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back())))
      item.remove_suffix(1);
    entries.emplace_back(item);
    if (next > rest.size()) break;
    rest.remove_prefix(next);
  }
  return entries;
}

std::string visible_device() {
  const std::vector<std::string> entries = visible_devices();
  return entries.empty() || entries.front().empty() ? "0" : entries.front();
}

std::filesystem::path device_lock_path(const std::string& device) {
  const char* dir = std::getenv("BLASTER_LOCK_DIR");
  std::string name;
  for (const char c : device)
    name += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '_';
  return std::filesystem::path(dir != nullptr && *dir != '\0' ? dir : "/tmp") /
         ("blaster-gpu-" + name + ".lock");
}

device_lock::device_lock(const std::string& device,
                         const std::function<void(const std::string&)>& waiting) {
  const std::filesystem::path path = device_lock_path(device);
  // Users of one machine share its GPUs: the file is everyone's, and a lock taken through a
  // read-only descriptor (another user's file under a strict umask) holds as well.
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd_ >= 0) {
    static_cast<void>(::fchmod(fd_, 0666));
  } else if (errno == EACCES) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  }
  if (fd_ < 0) {
    BLASTER_THROW(
        "{}: cannot open the GPU's lock: {}; set BLASTER_LOCK_DIR to a folder every "
        "user of this GPU can write",
        path.string(), std::strerror(errno));
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) {
      const int e = errno;
      ::close(fd_);
      BLASTER_THROW("{}: cannot lock the GPU: {}", path.string(), std::strerror(e));
    }
    char holder[32] = {};
    const ssize_t n = ::pread(fd_, holder, sizeof(holder) - 1, 0);
    if (waiting) {
      waiting(fmt::format("GPU {} is in use by blaster process {}; waiting for it ({})", device,
                          n > 0 ? std::string(holder, static_cast<std::size_t>(n)) : "unknown",
                          path.string()));
    }
    waited_ = true;
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) {
        const int e = errno;
        ::close(fd_);
        BLASTER_THROW("{}: cannot lock the GPU: {}", path.string(), std::strerror(e));
      }
    }
  }
  // Who holds it, for the next one who waits.
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(fd_, 0) == 0) static_cast<void>(::pwrite(fd_, pid.data(), pid.size(), 0));
}

device_lock::~device_lock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

}  // namespace blaster
