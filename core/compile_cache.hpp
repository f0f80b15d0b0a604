#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "core/compile_sandbox.hpp"
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

// The harness's own kernels (trusted source): looks the request up first; compiles in this
// process and stores on a miss. With no cache, just compiles. Never for a candidate.
compile_output compile_cached(const compile_request& request, compile_cache* cache);

// A candidate (untrusted source): looks the request up first, by its frontend's key, so that a
// hit starts no process; has its frontend (core/candidate_frontend.hpp) compile it on a miss, in
// the compile sandbox where it runs code, and stores what the compiler finished. An outcome the
// limits decided (a refusal) is not stored: it says nothing of what a compile under other limits
// would do.
compile_output compile_sandboxed_cached(const compile_request& request, compile_cache* cache,
                                        const compile_limits& limits);

}  // namespace blaster
