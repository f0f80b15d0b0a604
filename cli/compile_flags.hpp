#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "core/compile_sandbox.hpp"

namespace blaster::cli {

// The compile sandbox's limits as flags: bench, compile and portfolio take the same five.
struct compile_limit_flags {
  std::optional<double> timeout_s;
  std::optional<double> memory_gib;
  std::optional<std::uint64_t> max_source_bytes;
  std::optional<std::size_t> max_launches;
  std::optional<std::size_t> max_variants;
  std::optional<std::string> python;  // the interpreter that compiles Triton candidates
};

void add_compile_limit_flags(CLI::App& command, compile_limit_flags& flags);

// The limits the flags ask for, compile_limits' defaults where they are silent.
compile_limits to_compile_limits(const compile_limit_flags& flags);

// The flags given, as the recorded command line spells them: " --compile-timeout 10".
std::string compile_limit_arguments(const compile_limit_flags& flags);

}  // namespace blaster::cli
