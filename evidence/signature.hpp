#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

// OpenSSL's key type, declared here so that the header needs no OpenSSL include.
struct evp_pkey_st;

namespace blaster {

// An Ed25519 key (OpenSSL EVP_PKEY_ED25519): a private key, which signs and verifies, or a
// public key, which only verifies. Signatures are the 64 raw bytes of RFC 8032, so that
// `openssl pkeyutl -verify -pubin -inkey K.pub -rawin -in FILE -sigfile FILE.sig` checks them
// without blaster.
class ed25519_key {
 public:
  static ed25519_key generate();
  // PEM text (PKCS#8 private, SubjectPublicKeyInfo public). `origin` names the text's file in
  // the input_error thrown for anything that is not such a key.
  static ed25519_key from_private_pem(std::string_view pem, std::string_view origin);
  static ed25519_key from_public_pem(std::string_view pem, std::string_view origin);

  bool has_private() const { return private_; }
  std::string private_pem() const;  // blaster::error for a public key
  std::string public_pem() const;
  // SHA-256 of the 32 raw public key bytes: a short name to compare keys by.
  std::string public_sha256() const;

  std::string sign(std::string_view message) const;  // blaster::error for a public key
  bool verify(std::string_view message, std::string_view signature) const;

 private:
  struct deleter {
    void operator()(evp_pkey_st* key) const;
  };
  ed25519_key(evp_pkey_st* key, bool has_private);

  std::unique_ptr<evp_pkey_st, deleter> key_;
  bool private_ = false;
};

// Writes PREFIX.key (the private key, PEM, mode 0600) and PREFIX.pub (the public key, PEM).
// Existing files are never replaced: an input_error says so.
void write_key_pair(const ed25519_key& key, const std::filesystem::path& prefix);

// Reads a key file; a missing file or one that is not such a key is an input_error naming it.
ed25519_key read_private_key(const std::filesystem::path& path);
ed25519_key read_public_key(const std::filesystem::path& path);

}  // namespace blaster
