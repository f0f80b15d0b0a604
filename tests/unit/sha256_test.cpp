#include "core/sha256.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace blaster {
namespace {

// FIPS 180-2 / NIST CSRC example vectors.
constexpr const char* empty_digest =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr const char* abc_digest =
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
constexpr const char* two_block_message =
    "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";  // 448 bits
constexpr const char* two_block_digest =
    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1";
constexpr const char* million_a_digest =
    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";

TEST(Sha256, NistVectors) {
  EXPECT_EQ(sha256_hex(std::string_view("")), empty_digest);
  EXPECT_EQ(sha256_hex(std::string_view("abc")), abc_digest);
  EXPECT_EQ(sha256_hex(std::string_view(two_block_message)), two_block_digest);
}

TEST(Sha256, MillionAThroughIncrementalHasherInUnevenChunks) {
  const std::string chunk(7919, 'a');  // A prime, so chunks straddle the 64-byte blocks.
  sha256_hasher hasher;
  std::size_t fed_bytes = 0;
  while (fed_bytes + chunk.size() <= 1'000'000) {
    hasher.update(chunk);
    fed_bytes += chunk.size();
  }
  hasher.update(std::string(1'000'000 - fed_bytes, 'a'));
  EXPECT_EQ(hasher.finish_hex(), million_a_digest);
}

TEST(Sha256, ByteSpanOverloadMatchesTextOverload) {
  const std::vector<std::byte> bytes = {std::byte{'a'}, std::byte{'b'}, std::byte{'c'}};
  EXPECT_EQ(sha256_hex(std::span<const std::byte>(bytes)), abc_digest);

  sha256_hasher hasher;
  hasher.update(std::span<const std::byte>(bytes).first(1));
  hasher.update(std::string_view("bc"));
  EXPECT_EQ(hasher.finish_hex(), abc_digest);
}

TEST(Sha256, EmbeddedNulBytesAreHashed) {
  EXPECT_NE(sha256_hex(std::string_view("a\0b", 3)), sha256_hex(std::string_view("a")));
}

// The piecewise digest is SHA-256 over the pieces' SHA-256s in hex, worked out here by hand
// for 1,000,000 'a' in pieces of 7919 bytes (straddling the 64-byte blocks, the last one short).
TEST(Sha256, PiecewiseDigestIsTheDigestOfThePiecesDigests) {
  const std::string text(1'000'000, 'a');
  const auto bytes = std::as_bytes(std::span(text));
  std::string digests;
  for (std::size_t at = 0; at < text.size(); at += 7919)
    digests += sha256_hex(std::string_view(text).substr(at, 7919));
  EXPECT_EQ(piecewise_sha256_hex(bytes, 7919), sha256_hex(digests));
  // One piece: the digest of the one digest.
  EXPECT_EQ(piecewise_sha256_hex(bytes), sha256_hex(std::string_view(million_a_digest)));
  EXPECT_EQ(piecewise_sha256_hex({}), sha256_hex(std::string_view(empty_digest)));
  // Any byte changed, in any piece, changes it.
  std::string changed = text;
  changed[500'000] = 'b';
  EXPECT_NE(piecewise_sha256_hex(std::as_bytes(std::span(changed)), 7919),
            piecewise_sha256_hex(bytes, 7919));
  EXPECT_THROW(static_cast<void>(piecewise_sha256_hex(bytes, 0)), error);
}

TEST(Sha256, HasherRefusesUseAfterFinish) {
  sha256_hasher hasher;
  hasher.update(std::string_view("abc"));
  EXPECT_EQ(hasher.finish_hex(), abc_digest);
  EXPECT_THROW(hasher.update(std::string_view("more")), error);
  EXPECT_THROW(hasher.finish_hex(), error);
}

TEST(Sha256, FileDigestStreamsTheContent) {
  static std::atomic<int> counter{0};
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("blaster-sha256-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  {
    std::ofstream out(path, std::ios::binary);
    // Larger than the read chunk, so the file takes several reads.
    for (int i = 0; i < 1000; ++i) out << std::string(1000, 'a');
  }
  const std::string digest = sha256_file_hex(path);
  std::filesystem::remove(path);
  EXPECT_EQ(digest, million_a_digest);
}

TEST(Sha256, MissingFileThrowsNamingThePath) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "blaster-sha256-no-such-file-a8f3";
  try {
    sha256_file_hex(path);
    FAIL() << "expected blaster::error";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
}

TEST(Sha256, RecognizesDigestForm) {
  EXPECT_TRUE(is_sha256_hex(abc_digest));
  EXPECT_FALSE(is_sha256_hex(""));
  EXPECT_FALSE(is_sha256_hex(std::string(abc_digest).substr(1)));
  EXPECT_FALSE(is_sha256_hex(std::string(abc_digest) + "0"));
  std::string upper(abc_digest);
  upper[0] = 'B';
  EXPECT_FALSE(is_sha256_hex(upper));
  std::string non_hex(abc_digest);
  non_hex[5] = 'g';
  EXPECT_FALSE(is_sha256_hex(non_hex));
}

}  // namespace
}  // namespace blaster
