#pragma once

#include <cstdint>
#include <string_view>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace blaster::cli {

// `{"error": {"code", "message", "file", "line", "hint"}}`: what `--json` prints when a command
// fails. The file, line and hint are read from the message, whose form every error keeps
// ("FILE:LINE:COLUMN: what; how to fix it"); a part the message lacks is null.
nlohmann::json error_json(std::string_view code, std::string_view message);

// A number flag whose value must lie in [low, high]: unlike CLI::Range, NaN is refused too.
CLI::Validator finite_range(double low, double high);

// A whole-number flag whose value must be at least `low`, said in those words: CLI11's
// PositiveNumber and NonNegativeNumber name the range of a double, 300 digits long.
CLI::Validator whole_number_at_least(std::uint64_t low);

// Refuses an empty value (`--shard ''`) on every option of `app` and its subcommands that takes
// one, so that an empty value is never read as the flag's absence.
void refuse_empty_values(CLI::App& app);

}  // namespace blaster::cli
