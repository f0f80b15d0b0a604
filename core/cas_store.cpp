#include "core/cas_store.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <system_error>
#include <utility>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/sha256.hpp"

namespace blaster {
namespace {

void validate_digest(std::string_view digest) {
  if (!is_sha256_hex(digest)) {
    BLASTER_INPUT_ERROR("'{}' is not a SHA-256 digest (expected 64 lowercase hex digits)", digest);
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

}  // namespace

cas_store::cas_store(std::filesystem::path root) : root_(std::move(root)) {
  std::error_code ec;
  std::filesystem::create_directories(root_, ec);
  if (ec) BLASTER_THROW("cannot create the object store {}: {}", root_.string(), ec.message());
  remove_abandoned_temp_files(root_);
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
  // Never overwritten: same name, same bytes. An object whose bytes no longer hash to its name
  // is damaged, and writing the true bytes back is a repair, not an overwrite.
  if (contains(digest)) {
    const auto existing = read_file_if_exists(path);
    if (existing && sha256_hex(*existing) == digest) return digest;
  }

  const std::filesystem::path folder = path.parent_path();
  if (make_folder(folder)) fsync_folder(root_);

  // A concurrent put of the same bytes may rename first; replacing identical bytes is harmless.
  write_file_atomically(path, bytes, 0444);
  return digest;
}

std::optional<std::string> cas_store::get(std::string_view digest, bool verify) const {
  const std::filesystem::path path = path_of(digest);
  std::optional<std::string> bytes = read_file_if_exists(path);
  if (!bytes) return std::nullopt;
  if (verify) {
    const std::string actual = sha256_hex(*bytes);
    if (actual != digest) {
      BLASTER_THROW("{}: the object is corrupted: its bytes hash to {}, not to its name",
                    path.string(), actual);
    }
  }
  return bytes;
}

}  // namespace blaster
