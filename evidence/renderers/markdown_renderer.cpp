// A Markdown table: for reports, issues and pull requests.
#include <ostream>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "evidence/table_renderer.hpp"

namespace blaster {

std::string markdown_cell(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r' || c == '\t') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

class markdown_renderer final : public table_renderer {
  void do_render(const result_table& t, std::ostream& out) const override {
    if (!t.title.empty()) fmt::print(out, "## {}\n\n", t.title);
    for (const auto& line : t.preamble) fmt::print(out, "{}  \n", line);
    if (!t.preamble.empty()) fmt::print(out, "\n");
    std::string header = "|";
    std::string rule = "|";
    for (const auto& c : t.columns) {
      header += fmt::format(" {} |", markdown_cell(c.metric.name));
      rule += c.left ? "---|" : "---:|";
    }
    fmt::print(out, "{}\n{}\n", header, rule);
    std::vector<std::string> details;
    for (const auto& row : t.rows) {
      std::string line = "|";
      for (std::size_t i = 0; i < t.columns.size(); ++i) {
        const table_cell empty;
        const table_cell& value = i < row.cells.size() ? row.cells[i] : empty;
        std::string text = format_cell(t.columns[i], value);
        if (i + 1 == t.columns.size() && !row.summary.empty() &&
            std::holds_alternative<std::monostate>(value)) {
          text = row.summary;
        }
        line += fmt::format(" {} |", markdown_cell(text));
      }
      fmt::print(out, "{}\n", line);
      const std::string label = row.cells.empty() ? "" : format_cell(t.columns[0], row.cells[0]);
      for (const auto& d : row.details)
        details.push_back(fmt::format("- `{}`: {}", label, markdown_cell(d)));
    }
    if (!details.empty()) fmt::print(out, "\n{}\n", fmt::join(details, "\n"));
    for (const auto& note : t.notes) fmt::print(out, "\n{}\n", note);
  }
};

}  // namespace

std::unique_ptr<table_renderer> make_markdown_renderer() {
  return std::make_unique<markdown_renderer>();
}

}  // namespace blaster
