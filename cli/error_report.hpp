#pragma once

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

}  // namespace blaster::cli
