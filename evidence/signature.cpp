#include "evidence/signature.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <array>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/sha256.hpp"

namespace blaster {
namespace {

constexpr std::size_t signature_bytes = 64;
constexpr std::size_t public_key_bytes = 32;

std::string openssl_message() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "no OpenSSL error queued";
  std::array<char, 256> text{};
  ERR_error_string_n(code, text.data(), text.size());
  return text.data();
}

struct bio_deleter {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
using bio_ptr = std::unique_ptr<BIO, bio_deleter>;

struct md_ctx_deleter {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};
using md_ctx_ptr = std::unique_ptr<EVP_MD_CTX, md_ctx_deleter>;

struct pkey_ctx_deleter {
  void operator()(EVP_PKEY_CTX* ctx) const { EVP_PKEY_CTX_free(ctx); }
};

bio_ptr memory_bio(std::string_view bytes) {
  bio_ptr bio(BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size())));
  if (!bio) BLASTER_THROW("BIO_new_mem_buf failed: {}", openssl_message());
  return bio;
}

std::string drain(BIO* bio) {
  char* data = nullptr;
  const long size_bytes = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<std::size_t>(size_bytes));
}

}  // namespace

void ed25519_key::deleter::operator()(evp_pkey_st* key) const { EVP_PKEY_free(key); }

ed25519_key::ed25519_key(evp_pkey_st* key, bool has_private) : key_(key), private_(has_private) {}

ed25519_key ed25519_key::generate() {
  std::unique_ptr<EVP_PKEY_CTX, pkey_ctx_deleter> ctx(
      EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nullptr));
  if (!ctx) BLASTER_THROW("EVP_PKEY_CTX_new_id(ED25519) failed: {}", openssl_message());
  EVP_PKEY* key = nullptr;
  if (EVP_PKEY_keygen_init(ctx.get()) != 1 || EVP_PKEY_keygen(ctx.get(), &key) != 1) {
    BLASTER_THROW("Ed25519 key generation failed: {}", openssl_message());
  }
  return ed25519_key(key, true);
}

ed25519_key ed25519_key::from_private_pem(std::string_view pem, std::string_view origin) {
  const bio_ptr bio = memory_bio(pem);
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr);
  if (key == nullptr) {
    const std::string why = openssl_message();
    if (pem.find("PUBLIC KEY") != std::string_view::npos) {
      BLASTER_INPUT_ERROR(
          "{}: this is a public key; signing needs the private key (PREFIX.key "
          "from blaster keygen)",
          origin);
    }
    BLASTER_INPUT_ERROR(
        "{}: not a PEM private key ({}); make one with blaster keygen --out "
        "PREFIX",
        origin, why);
  }
  ed25519_key out(key, true);
  if (EVP_PKEY_get_id(key) != EVP_PKEY_ED25519) {
    BLASTER_INPUT_ERROR("{}: not an Ed25519 key; make one with blaster keygen --out PREFIX",
                        origin);
  }
  return out;
}

ed25519_key ed25519_key::from_public_pem(std::string_view pem, std::string_view origin) {
  const bio_ptr bio = memory_bio(pem);
  EVP_PKEY* key = PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr);
  if (key == nullptr) {
    const std::string why = openssl_message();
    if (pem.find("PRIVATE KEY") != std::string_view::npos) {
      BLASTER_INPUT_ERROR(
          "{}: this is a private key; give the public key (PREFIX.pub), and keep "
          "the private one to yourself",
          origin);
    }
    BLASTER_INPUT_ERROR(
        "{}: not a PEM public key ({}); give the PREFIX.pub that blaster keygen "
        "wrote",
        origin, why);
  }
  ed25519_key out(key, false);
  if (EVP_PKEY_get_id(key) != EVP_PKEY_ED25519) {
    BLASTER_INPUT_ERROR(
        "{}: not an Ed25519 public key; give the PREFIX.pub that blaster keygen "
        "wrote",
        origin);
  }
  return out;
}

std::string ed25519_key::private_pem() const {
  if (!private_) BLASTER_THROW("private_pem: this is a public key");
  const bio_ptr bio(BIO_new(BIO_s_mem()));
  if (!bio ||
      PEM_write_bio_PrivateKey(bio.get(), key_.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    BLASTER_THROW("PEM_write_bio_PrivateKey failed: {}", openssl_message());
  }
  return drain(bio.get());
}

std::string ed25519_key::public_pem() const {
  const bio_ptr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PUBKEY(bio.get(), key_.get()) != 1) {
    BLASTER_THROW("PEM_write_bio_PUBKEY failed: {}", openssl_message());
  }
  return drain(bio.get());
}

std::string ed25519_key::public_sha256() const {
  std::array<unsigned char, public_key_bytes> raw{};
  std::size_t size_bytes = raw.size();
  if (EVP_PKEY_get_raw_public_key(key_.get(), raw.data(), &size_bytes) != 1) {
    BLASTER_THROW("EVP_PKEY_get_raw_public_key failed: {}", openssl_message());
  }
  return sha256_hex(std::string_view(reinterpret_cast<const char*>(raw.data()), size_bytes));
}

std::string ed25519_key::sign(std::string_view message) const {
  if (!private_) BLASTER_THROW("sign: a public key cannot sign");
  const md_ctx_ptr ctx(EVP_MD_CTX_new());
  std::string signature(signature_bytes, '\0');
  std::size_t size_bytes = signature.size();
  // Ed25519 hashes internally: no digest is named, and the message goes in one call.
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key_.get()) != 1 ||
      EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &size_bytes,
                     reinterpret_cast<const unsigned char*>(message.data()), message.size()) != 1) {
    BLASTER_THROW("Ed25519 signing failed: {}", openssl_message());
  }
  signature.resize(size_bytes);
  return signature;
}

bool ed25519_key::verify(std::string_view message, std::string_view signature) const {
  if (signature.size() != signature_bytes) return false;
  const md_ctx_ptr ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, key_.get()) != 1) {
    BLASTER_THROW("EVP_DigestVerifyInit failed: {}", openssl_message());
  }
  const int verdict = EVP_DigestVerify(
      ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
      reinterpret_cast<const unsigned char*>(message.data()), message.size());
  ERR_clear_error();  // A bad signature queues an error that is not a failure of ours.
  return verdict == 1;
}

void write_key_pair(const ed25519_key& key, const std::filesystem::path& prefix) {
  const std::filesystem::path private_path = prefix.string() + ".key";
  const std::filesystem::path public_path = prefix.string() + ".pub";
  for (const auto& path : {private_path, public_path}) {
    std::error_code ec;
    if (std::filesystem::exists(std::filesystem::symlink_status(path, ec))) {
      BLASTER_INPUT_ERROR("{} exists; blaster keygen never replaces a key: pick another --out",
                          path.string());
    }
  }
  const std::filesystem::path folder =
      prefix.parent_path().empty() ? std::filesystem::path(".") : prefix.parent_path();
  if (!std::filesystem::is_directory(folder)) {
    BLASTER_INPUT_ERROR("{}: no such folder for the key files; create it first", folder.string());
  }
  // The public key last: a .pub without its .key would be a key nobody can sign with.
  write_file_atomically(private_path, key.private_pem(), 0600);
  write_file_atomically(public_path, key.public_pem(), 0644);
}

ed25519_key read_private_key(const std::filesystem::path& path) {
  return ed25519_key::from_private_pem(read_file(path), path.string());
}

ed25519_key read_public_key(const std::filesystem::path& path) {
  return ed25519_key::from_public_pem(read_file(path), path.string());
}

}  // namespace blaster
