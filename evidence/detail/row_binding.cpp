#include "evidence/detail/row_binding.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace blaster::detail {

void bind_text_or_null(statement& query, int index, std::string_view text) {
  if (text.empty()) {
    query.bind_null(index);
  } else {
    query.bind(index, text);
  }
}

void bind_real_or_null(statement& query, int index, const std::optional<double>& value) {
  if (value) {
    query.bind(index, *value);
  } else {
    query.bind_null(index);
  }
}

void bind_int_or_null(statement& query, int index, const std::optional<std::int64_t>& value) {
  if (value) {
    query.bind(index, *value);
  } else {
    query.bind_null(index);
  }
}

void require_json(std::string_view column, std::string_view text) {
  if (!text.empty() && !nlohmann::json::accept(text)) {
    BLASTER_THROW("{}: not valid JSON: {:.80}", column, text);
  }
}

std::int64_t insert_returning_id(statement& insert, std::string_view table) {
  if (!insert.step()) BLASTER_THROW("INSERT INTO {} returned no id", table);
  const std::int64_t id = insert.column_int64(0);
  insert.step();  // Runs the statement to completion, so that the row is written.
  return id;
}

}  // namespace blaster::detail
