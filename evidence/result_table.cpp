#include "evidence/result_table.hpp"

#include <fmt/format.h>

namespace blaster {

std::string format_cell(const table_column& column, const table_cell& cell) {
  if (const auto* number = std::get_if<double>(&cell)) {
    // Both branches views: a ternary of "{}" and a std::string would be a temporary string.
    const std::string_view format = column.metric.format.empty()
                                        ? std::string_view("{}")
                                        : std::string_view(column.metric.format);
    return fmt::format(fmt::runtime(format), *number);
  }
  if (const auto* text = std::get_if<std::string>(&cell)) return *text;
  return "-";
}

}  // namespace blaster
