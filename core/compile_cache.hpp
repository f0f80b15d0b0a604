#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "core/nvrtc_compiler.hpp"

namespace blaster {

class cas_store;

// Compilations by key (compile_key): the cubin and PTX live in the CAS, the rest in one small
// JSON entry per key. A hit skips NVRTC entirely.
class compile_cache {
 public:
  compile_cache(std::filesystem::path dir, cas_store& cas);

  [[nodiscard]] std::optional<compile_output> find(const std::string& key) const;
  void put(const compile_output& output);

 private:
  [[nodiscard]] std::filesystem::path entry_path(const std::string& key) const;

  std::filesystem::path dir_;
  cas_store& cas_;
};

// Looks the request up first; compiles and stores on a miss. With no cache, just compiles.
compile_output compile_cached(const compile_request& request, compile_cache* cache);

}  // namespace blaster
