#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace blaster {

// A SHA-256 content-addressed store: the object with digest D lives at <root>/D[0:2]/D. Objects
// are written once, atomically and durably, read-only (0444), and verified by rehashing on read.
class cas_store {
 public:
  // Creates the root and removes the temp files (`*.tmp.*`) that interrupted writes left behind:
  // those whose writer process is gone. A temp file of a live writer is kept, so that opening a
  // store never breaks a put that another process has in flight.
  explicit cas_store(std::filesystem::path root);

  // Stores the bytes and returns their digest. An object that already exists is not rewritten.
  std::string put(std::string_view bytes);

  // The object's bytes, or nullopt when the store has no such object. With `verify`, bytes that
  // do not hash to their name throw blaster::error naming the object's path.
  std::optional<std::string> get(std::string_view digest, bool verify = true) const;

  bool contains(std::string_view digest) const;

  // Where the object lives (or would live); the digest must be 64 lowercase hex digits, otherwise
  // every method throws blaster::input_error.
  std::filesystem::path path_of(std::string_view digest) const;

  const std::filesystem::path& root() const { return root_; }

 private:
  std::filesystem::path root_;
};

}  // namespace blaster
