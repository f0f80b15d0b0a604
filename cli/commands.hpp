#pragma once

#include <CLI/CLI.hpp>

#include "cli/cli_context.hpp"

namespace blaster::cli {

// Each subcommand registers its flags on the app and returns the function that runs it.
using command_fn = std::function<int()>;

command_fn add_bench_command(CLI::App& app, const global_options& global);
command_fn add_compile_command(CLI::App& app, const global_options& global);
command_fn add_doctor_command(CLI::App& app, const global_options& global);

}  // namespace blaster::cli
