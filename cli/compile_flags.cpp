#include "cli/compile_flags.hpp"

#include <fmt/format.h>

#include "cli/error_report.hpp"
#include "core/launch_plan.hpp"

namespace blaster::cli {

void add_compile_limit_flags(CLI::App& command, compile_limit_flags& flags) {
  const compile_limits defaults;
  command
      .add_option("--compile-timeout", flags.timeout_s,
                  fmt::format("seconds NVRTC may spend on one variant; past them its process is "
                              "stopped and the variant is a compile_error (default {})",
                              defaults.timeout.count() / 1000))
      ->check(finite_range(1.0, 86400.0));
  command
      .add_option("--compile-memory", flags.memory_gib,
                  fmt::format("GiB of address space the compiling process may use; past them "
                              "the variant is a compile_error (default {})",
                              defaults.memory_bytes >> 30))
      ->check(finite_range(0.25, 1024.0));
  command
      .add_option("--max-source-bytes", flags.max_source_bytes,
                  fmt::format("a candidate file larger than this is a compile_error, refused "
                              "unread (default {}, 1 MiB)",
                              defaults.max_source_bytes))
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 30));
  command
      .add_option("--max-launches", flags.max_launches,
                  fmt::format("a launch plan of more launches is a plan_error (default {})",
                              defaults.max_launches))
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}));
  command
      .add_option("--max-variants", flags.max_variants,
                  fmt::format("a launch plan whose params expand to more combinations is a "
                              "plan_error (default {}, at most {})",
                              defaults.max_variants, max_param_configurations))
      ->check(CLI::Range(std::size_t{1}, max_param_configurations));
  command.add_option("--python", flags.python,
                     "the python3 whose triton compiles .py candidates (default: python3 on "
                     "PATH); where it has no triton, the .py files of kernels/<task>/ are left "
                     "out with a line that says so, and a .py named with --candidate is a "
                     "compile_error");
}

compile_limits to_compile_limits(const compile_limit_flags& flags) {
  compile_limits limits;
  if (flags.timeout_s) {
    limits.timeout = std::chrono::milliseconds(static_cast<long long>(*flags.timeout_s * 1000));
  }
  if (flags.memory_gib) {
    limits.memory_bytes = static_cast<std::uint64_t>(*flags.memory_gib * 1073741824.0);
  }
  if (flags.max_source_bytes) limits.max_source_bytes = *flags.max_source_bytes;
  if (flags.max_launches) limits.max_launches = *flags.max_launches;
  if (flags.max_variants) limits.max_variants = *flags.max_variants;
  if (flags.python) limits.python = *flags.python;
  return limits;
}

std::string compile_limit_arguments(const compile_limit_flags& flags) {
  std::string out;
  if (flags.timeout_s) out += fmt::format(" --compile-timeout {:g}", *flags.timeout_s);
  if (flags.memory_gib) out += fmt::format(" --compile-memory {:g}", *flags.memory_gib);
  if (flags.max_source_bytes) out += fmt::format(" --max-source-bytes {}", *flags.max_source_bytes);
  if (flags.max_launches) out += fmt::format(" --max-launches {}", *flags.max_launches);
  if (flags.max_variants) out += fmt::format(" --max-variants {}", *flags.max_variants);
  if (flags.python) out += fmt::format(" --python {}", *flags.python);
  return out;
}

}  // namespace blaster::cli
