#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

// OpenSSL's digest context, declared here so that the header needs no OpenSSL include.
struct evp_md_ctx_st;

namespace blaster {

// SHA-256 of the bytes, as 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);
std::string sha256_hex(std::span<const std::byte> bytes);

// SHA-256 over the SHA-256s (as hex) of the bytes' consecutive pieces of `piece_bytes`, the
// pieces hashed on every core: gigabytes in a fraction of a second where one SHA-256 takes
// seconds. A digest of its own, equal to no plain SHA-256 of the same bytes.
std::string piecewise_sha256_hex(std::span<const std::byte> bytes,
                                 std::size_t piece_bytes = std::size_t{64} << 20U);

// SHA-256 of a file's content, read in chunks so that a large file needs no buffer of its size.
std::string sha256_file_hex(const std::filesystem::path& path);

// True when `text` is exactly 64 lowercase hex digits, the form every digest here takes.
bool is_sha256_hex(std::string_view text);

// Incremental SHA-256: update() any number of times, then finish_hex() once.
class sha256_hasher {
 public:
  sha256_hasher();
  ~sha256_hasher();
  sha256_hasher(const sha256_hasher&) = delete;
  sha256_hasher& operator=(const sha256_hasher&) = delete;

  void update(std::string_view bytes);
  void update(std::span<const std::byte> bytes);
  // Ends the digest; a later update() or finish_hex() throws blaster::error.
  std::string finish_hex();

 private:
  evp_md_ctx_st* context_;
  bool finished_ = false;
};

}  // namespace blaster
