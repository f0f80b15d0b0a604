#pragma once

#include <CLI/CLI.hpp>

#include "cli/cli_context.hpp"

namespace blaster::cli {

// Each subcommand registers its flags on the app and returns the function that runs it.
using command_fn = std::function<int()>;

command_fn add_bench_command(CLI::App& app, const global_options& global);
command_fn add_compile_command(CLI::App& app, const global_options& global);
command_fn add_doctor_command(CLI::App& app, const global_options& global);
command_fn add_portfolio_command(CLI::App& app, const global_options& global);
command_fn add_profile_command(CLI::App& app, const global_options& global);
// Two runs, variant by variant: cli/compare_command.cpp.
command_fn add_compare_command(CLI::App& app, const global_options& global);

// The store and its evidence: cli/runs_command.cpp and cli/evidence_commands.cpp.
command_fn add_runs_command(CLI::App& app, const global_options& global);
command_fn add_show_command(CLI::App& app, const global_options& global);
command_fn add_history_command(CLI::App& app, const global_options& global);
command_fn add_export_command(CLI::App& app, const global_options& global);
command_fn add_verify_command(CLI::App& app, const global_options& global);
command_fn add_keygen_command(CLI::App& app, const global_options& global);

// The optimization loop, its memory and its trajectories: cli/optimize_commands.cpp.
command_fn add_optimize_command(CLI::App& app, const global_options& global);
command_fn add_proposer_command(CLI::App& app, const global_options& global);
// Candidates from a trainer that drives its own loop: cli/serve_commands.cpp.
command_fn add_serve_command(CLI::App& app, const global_options& global);
command_fn add_eval_command(CLI::App& app, const global_options& global);
command_fn add_memory_command(CLI::App& app, const global_options& global);
command_fn add_trajectories_command(CLI::App& app, const global_options& global);
// Tuned tables of a candidate's params per served size: cli/tune_command.cpp.
command_fn add_tune_command(CLI::App& app, const global_options& global);

// Homes into one: cli/merge_command.cpp.
command_fn add_merge_command(CLI::App& app, const global_options& global);

// `blaster verify`: the bundle was read, and it does not hold.
inline constexpr int exit_not_verified = 4;
// `blaster merge`: a run or portfolio item clashed with the home's own and was left out.
inline constexpr int exit_merge_conflict = 5;

}  // namespace blaster::cli
