// Comma-separated values (RFC 4180) for spreadsheets and scripts: a header of the columns' tags,
// numbers unrounded, a rejection's reason in the last column.
#include <ostream>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "evidence/table_renderer.hpp"

namespace blaster {
namespace {

// A field quoted where it holds a separator, a quote or a line break.
std::string field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) {
    out += c;
    if (c == '"') out += '"';
  }
  return out + "\"";
}

class csv_renderer final : public table_renderer {
  void do_render(const result_table& t, std::ostream& out) const override {
    std::string line;
    for (std::size_t i = 0; i < t.columns.size(); ++i) {
      if (i > 0) line += ',';
      line += field(std::string(t.columns[i].metric.tag));
    }
    fmt::print(out, "{}\r\n", line);
    for (const auto& row : t.rows) {
      line.clear();
      for (std::size_t i = 0; i < t.columns.size(); ++i) {
        if (i > 0) line += ',';
        const table_cell empty;
        const table_cell& cell = i < row.cells.size() ? row.cells[i] : empty;
        if (const auto* number = std::get_if<double>(&cell)) {
          line += fmt::format("{}", *number);
        } else if (const auto* text = std::get_if<std::string>(&cell)) {
          line += field(*text);
        } else if (i + 1 == t.columns.size()) {
          line += field(row.summary);
        }
      }
      fmt::print(out, "{}\r\n", line);
    }
  }
};

}  // namespace

std::unique_ptr<table_renderer> make_csv_renderer() { return std::make_unique<csv_renderer>(); }

}  // namespace blaster
