#include "core/sha256.hpp"

#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/error.hpp"
#include "core/parallel_for.hpp"

namespace blaster {
namespace {

std::string openssl_message() {
  const unsigned long code = ERR_get_error();
  if (code == 0) return "no OpenSSL error queued";
  std::array<char, 256> text{};
  ERR_error_string_n(code, text.data(), text.size());
  return text.data();
}

std::string to_hex(const unsigned char* digest, unsigned int size_bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string hex(2 * static_cast<std::size_t>(size_bytes), '\0');
  for (unsigned int i = 0; i < size_bytes; ++i) {
    hex[2 * i] = digits[digest[i] >> 4];
    hex[2 * i + 1] = digits[digest[i] & 0x0f];
  }
  return hex;
}

// Closes the descriptor however the read loop ends.
class read_only_file {
 public:
  explicit read_only_file(const std::filesystem::path& path)
      : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_ < 0)
      BLASTER_THROW("open({}) for reading failed: {}", path.string(), std::strerror(errno));
  }
  ~read_only_file() { ::close(fd_); }
  read_only_file(const read_only_file&) = delete;
  read_only_file& operator=(const read_only_file&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

sha256_hasher::sha256_hasher() : context_(EVP_MD_CTX_new()) {
  if (context_ == nullptr) BLASTER_THROW("EVP_MD_CTX_new failed: {}", openssl_message());
  if (EVP_DigestInit_ex(context_, EVP_sha256(), nullptr) != 1) {
    const std::string message = openssl_message();
    EVP_MD_CTX_free(context_);
    BLASTER_THROW("EVP_DigestInit_ex(SHA-256) failed: {}", message);
  }
}

sha256_hasher::~sha256_hasher() { EVP_MD_CTX_free(context_); }

void sha256_hasher::update(std::string_view bytes) {
  if (finished_) BLASTER_THROW("sha256_hasher::update called after finish_hex");
  if (EVP_DigestUpdate(context_, bytes.data(), bytes.size()) != 1) {
    BLASTER_THROW("EVP_DigestUpdate failed: {}", openssl_message());
  }
}

void sha256_hasher::update(std::span<const std::byte> bytes) {
  update(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

std::string sha256_hasher::finish_hex() {
  if (finished_) BLASTER_THROW("sha256_hasher::finish_hex called twice");
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size_bytes = 0;
  if (EVP_DigestFinal_ex(context_, digest.data(), &size_bytes) != 1) {
    BLASTER_THROW("EVP_DigestFinal_ex failed: {}", openssl_message());
  }
  finished_ = true;
  return to_hex(digest.data(), size_bytes);
}

std::string sha256_hex(std::string_view bytes) {
  sha256_hasher hasher;
  hasher.update(bytes);
  return hasher.finish_hex();
}

std::string sha256_hex(std::span<const std::byte> bytes) {
  sha256_hasher hasher;
  hasher.update(bytes);
  return hasher.finish_hex();
}

std::string piecewise_sha256_hex(std::span<const std::byte> bytes, std::size_t piece_bytes) {
  if (piece_bytes == 0) BLASTER_THROW("piecewise SHA-256 of pieces of 0 bytes");
  const std::size_t pieces =
      std::max<std::size_t>(1, (bytes.size() + piece_bytes - 1) / piece_bytes);
  std::vector<std::string> digests(pieces);
  parallel_for(static_cast<std::int64_t>(pieces), [&](std::int64_t begin, std::int64_t end) {
    for (auto k = static_cast<std::size_t>(begin); k < static_cast<std::size_t>(end); ++k) {
      const std::size_t at = k * piece_bytes;
      digests[k] = sha256_hex(bytes.subspan(at, std::min(piece_bytes, bytes.size() - at)));
    }
  });
  sha256_hasher all;
  for (const auto& d : digests) all.update(d);
  return all.finish_hex();
}

std::string sha256_file_hex(const std::filesystem::path& path) {
  const read_only_file file(path);
  sha256_hasher hasher;
  std::array<char, 1 << 16> chunk{};
  for (;;) {
    const ssize_t got_bytes = ::read(file.fd(), chunk.data(), chunk.size());
    if (got_bytes < 0) {
      if (errno == EINTR) continue;
      BLASTER_THROW("read({}) failed: {}", path.string(), std::strerror(errno));
    }
    if (got_bytes == 0) break;
    hasher.update(std::string_view(chunk.data(), static_cast<std::size_t>(got_bytes)));
  }
  return hasher.finish_hex();
}

bool is_sha256_hex(std::string_view text) {
  if (text.size() != 64) return false;
  for (const char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace blaster
