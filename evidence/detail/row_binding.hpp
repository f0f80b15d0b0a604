#pragma once

// Binding a store row's values: empty text and absent numbers are NULL.

#include <cstdint>
#include <optional>
#include <string_view>

#include "evidence/database.hpp"

namespace blaster::detail {

void bind_text_or_null(statement& query, int index, std::string_view text);
void bind_real_or_null(statement& query, int index, const std::optional<double>& value);
void bind_int_or_null(statement& query, int index, const std::optional<std::int64_t>& value);
// Rows that hold JSON hold valid JSON: a reader should never meet a half-written document.
void require_json(std::string_view column, std::string_view text);
// Runs an INSERT ... RETURNING id to completion and gives the id.
std::int64_t insert_returning_id(statement& insert, std::string_view table);

}  // namespace blaster::detail
