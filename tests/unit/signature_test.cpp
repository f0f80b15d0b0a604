#include "evidence/signature.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "../store/store_test_support.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"

namespace blaster {
namespace {

using testing::temp_folder;

// A valid key of the wrong kind (ECDSA P-256), made once with openssl genpkey.
constexpr std::string_view p256_private_pem = R"(-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgKZsgVsjv9CCncr1f
QgipQk0Y6RMaHAJY9wJGuT5Ju7yhRANCAAT7roLRBB3QAmtCqoS3Uqh3tiszJjcA
w/oNDLu1LU0mQWd8ZW7O+ronMXjzrW3SqpYuEef+juV0HxA7bTHkKOEP
-----END PRIVATE KEY-----
)";
constexpr std::string_view p256_public_pem = R"(-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE8uS2It0NC5OYrbuPdS6HmEFAl6oP
N/C/E4DdJB6mwnjGZ1k1HLqAKfTeXSeeRZn7YUNZxsL5OaBOXDU4WvmkoQ==
-----END PUBLIC KEY-----
)";

std::string input_error_of(auto&& call) {
  try {
    call();
  } catch (const input_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no input_error";
  return {};
}

TEST(Signature, SignsAndVerifiesRawEd25519) {
  const ed25519_key key = ed25519_key::generate();
  const std::string signature = key.sign("manifest bytes");
  EXPECT_EQ(signature.size(), 64U);
  EXPECT_TRUE(key.verify("manifest bytes", signature));
  EXPECT_FALSE(key.verify("manifest bytez", signature));
  std::string flipped = signature;
  flipped[10] ^= 0x20;
  EXPECT_FALSE(key.verify("manifest bytes", flipped));
  EXPECT_FALSE(key.verify("manifest bytes", signature.substr(0, 63)));
  EXPECT_FALSE(ed25519_key::generate().verify("manifest bytes", signature));
  // Ed25519 is deterministic: the same message, the same signature.
  EXPECT_EQ(key.sign("manifest bytes"), signature);
}

TEST(Signature, PemRoundTripsKeepTheKey) {
  const ed25519_key key = ed25519_key::generate();
  const ed25519_key reread = ed25519_key::from_private_pem(key.private_pem(), "k");
  const ed25519_key public_only = ed25519_key::from_public_pem(key.public_pem(), "k.pub");
  EXPECT_TRUE(reread.has_private());
  EXPECT_FALSE(public_only.has_private());
  EXPECT_EQ(public_only.public_sha256(), key.public_sha256());
  EXPECT_NE(ed25519_key::generate().public_sha256(), key.public_sha256());
  EXPECT_TRUE(public_only.verify("m", reread.sign("m")));
  EXPECT_THROW(public_only.sign("m"), error);
  EXPECT_THROW(static_cast<void>(public_only.private_pem()), error);
}

TEST(Signature, WrongKeyFilesAreInputErrorsNamingTheFile) {
  const ed25519_key key = ed25519_key::generate();
  EXPECT_NE(input_error_of([&] {
              ed25519_key::from_private_pem("garbage", "me.key");
            }).find("me.key: not a PEM private key"),
            std::string::npos);
  EXPECT_NE(input_error_of([&] {
              ed25519_key::from_private_pem(key.public_pem(), "me.pub");
            }).find("me.pub: this is a public key"),
            std::string::npos);
  EXPECT_NE(input_error_of([&] {
              ed25519_key::from_public_pem(key.private_pem(), "me.key");
            }).find("me.key: this is a private key"),
            std::string::npos);
  EXPECT_NE(input_error_of([&] {
              ed25519_key::from_private_pem(p256_private_pem, "ec.key");
            }).find("ec.key: not an Ed25519 key"),
            std::string::npos);
  EXPECT_NE(input_error_of([&] {
              ed25519_key::from_public_pem(p256_public_pem, "ec.pub");
            }).find("ec.pub: not an Ed25519 public key"),
            std::string::npos);
  EXPECT_NE(input_error_of([&] { read_public_key("/no/such/key.pub"); }).find("/no/such/key.pub"),
            std::string::npos);
}

TEST(Signature, KeyPairFilesArePrivateAndNeverReplaced) {
  const temp_folder dir("keys");
  const ed25519_key key = ed25519_key::generate();
  write_key_pair(key, dir.path() / "me");
  struct stat info {};
  ASSERT_EQ(::stat((dir.path() / "me.key").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600U);
  ASSERT_EQ(::stat((dir.path() / "me.pub").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0644U);
  EXPECT_EQ(read_private_key(dir.path() / "me.key").public_sha256(), key.public_sha256());
  EXPECT_EQ(read_public_key(dir.path() / "me.pub").public_sha256(), key.public_sha256());

  const std::string before = read_file(dir.path() / "me.key");
  EXPECT_THROW(write_key_pair(ed25519_key::generate(), dir.path() / "me"), input_error);
  EXPECT_EQ(read_file(dir.path() / "me.key"), before);
  EXPECT_THROW(write_key_pair(key, dir.path() / "missing" / "me"), input_error);
}

}  // namespace
}  // namespace blaster
