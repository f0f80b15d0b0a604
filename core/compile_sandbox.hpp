#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "core/nvrtc_compiler.hpp"

namespace blaster {

// The limits a candidate compiles under: one field per flag of bench, compile and portfolio.
struct compile_limits {
  std::chrono::milliseconds timeout{60'000};  // per NVRTC run (--compile-timeout SECONDS)
  // [bytes] the compiling child's address space (--compile-memory GIB)
  std::uint64_t memory_bytes = std::uint64_t{4} << 30;
  std::uint64_t max_source_bytes = std::uint64_t{1} << 20;  // [bytes] (--max-source-bytes)
  std::size_t max_launches = 64;   // launch steps of one plan (--max-launches)
  std::size_t max_variants = 256;  // params combinations of one plan (--max-variants)
  // The blaster executable whose hidden `__compile` subcommand runs NVRTC; empty: the one
  // running now.
  std::filesystem::path executable;
  // The interpreter that compiles Triton candidates (--python); empty: python3 on PATH.
  std::filesystem::path python;
};

// Compiles an untrusted source in a supervised child, `blaster __compile DIR`: NVRTC runs there
// under the deadline and the address-space cap, in an empty working folder of this user's (NVRTC
// looks for quoted includes in its working folder, and writes its path into the cubin, so the
// path stays the same), after the child checked the include policy again, and
// where the kernel allows it (Landlock) with read access to the toolkit's folders only. The
// outcome comes back through a file. Exceeding the deadline or the cap, or a crash of the
// compiler, is ok == false with `refusal` naming the limit and the flag that raises it (one
// sentence; the caller adds the file's path); that is a verdict about the source, never an
// exception. At most one child per hardware thread runs at
// a time, whichever thread asks. Throws blaster::error only when no child can be started.
compile_output compile_sandboxed(const compile_request& request, const compile_limits& limits);

// The child's side, `blaster __compile DIR`: reads DIR/request.cbor, writes DIR/result.cbor.
int run_compile_child(const std::filesystem::path& dir);

}  // namespace blaster
