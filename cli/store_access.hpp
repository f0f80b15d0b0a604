#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_context.hpp"
#include "evidence/run_catalog.hpp"
#include "evidence/store.hpp"

namespace blaster::cli {

// The store of --home for a command that only reads it: null when the home holds no database
// yet, so that reading never creates a store where none was.
std::unique_ptr<store> open_existing_store(const global_options& global);

// Like open_existing_store, but a missing store is an input_error that says where blaster looked.
std::unique_ptr<store> require_store(const global_options& global);

// A result row as `--json` prints it.
nlohmann::json to_json(const stored_result& result);

// "-" for a missing number, else the number in `format`.
std::string format_optional(const std::optional<double>& value, const char* format);

}  // namespace blaster::cli
