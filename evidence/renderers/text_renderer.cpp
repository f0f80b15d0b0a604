// Aligned columns for a terminal: what blaster prints by default.
#include <algorithm>
#include <ostream>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "evidence/table_renderer.hpp"

namespace blaster {
namespace {

bool empty_from(const table_row& row, std::size_t first) {
  for (std::size_t i = first; i < row.cells.size(); ++i) {
    if (!std::holds_alternative<std::monostate>(row.cells[i])) return false;
  }
  return true;
}

class text_renderer final : public table_renderer {
  void do_render(const result_table& t, std::ostream& out) const override {
    for (const auto& line : t.preamble) fmt::print(out, "{}\n", line);
    if (!t.preamble.empty()) fmt::print(out, "\n");
    std::vector<std::size_t> widths;
    for (const auto& c : t.columns) {
      widths.push_back(std::max<std::size_t>(static_cast<std::size_t>(c.width), c.metric.name.size()));
    }
    std::vector<std::vector<std::string>> shown;
    for (const auto& row : t.rows) {
      std::vector<std::string> cells;
      for (std::size_t i = 0; i < t.columns.size() && i < row.cells.size(); ++i) {
        // An empty word is blank; an empty number is a dash.
        const bool blank = t.columns[i].left && std::holds_alternative<std::monostate>(row.cells[i]);
        cells.push_back(blank ? std::string() : format_cell(t.columns[i], row.cells[i]));
        const bool summarized = !row.summary.empty() && empty_from(row, t.summary_after);
        if (!summarized || i < t.summary_after) widths[i] = std::max(widths[i], cells.back().size());
      }
      shown.push_back(std::move(cells));
    }
    auto line = [&](const std::vector<std::string>& cells, std::size_t count) {
      std::string text;
      for (std::size_t i = 0; i < count; ++i) {
        if (i > 0) text += "  ";
        const bool last = i + 1 == count;
        const std::string& cell = cells[i];
        if (t.columns[i].left) {
          text += last ? cell : fmt::format("{:<{}}", cell, widths[i]);
        } else {
          text += fmt::format("{:>{}}", cell, widths[i]);
        }
      }
      return text;
    };
    std::vector<std::string> header;
    for (const auto& c : t.columns) header.emplace_back(c.metric.name);
    std::string header_line = line(header, header.size());
    while (!header_line.empty() && header_line.back() == ' ') header_line.pop_back();
    fmt::print(out, "{}\n", header_line);
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
      const table_row& row = t.rows[r];
      if (!row.summary.empty() && empty_from(row, t.summary_after)) {
        const std::size_t kept = std::min(t.summary_after, shown[r].size());
        std::vector<std::string> cells(shown[r].begin(), shown[r].begin() + kept);
        std::string text;
        for (std::size_t i = 0; i < kept; ++i) {
          text += t.columns[i].left ? fmt::format("{:<{}}  ", cells[i], widths[i])
                                    : fmt::format("{:>{}}  ", cells[i], widths[i]);
        }
        fmt::print(out, "{}{}\n", text, row.summary);
      } else {
        std::string text = line(shown[r], shown[r].size());
        // A trailing empty text column prints nothing, not a dash.
        while (!text.empty() && text.back() == ' ') text.pop_back();
        fmt::print(out, "{}\n", text);
      }
      for (const auto& detail : row.details) fmt::print(out, "    {}\n", detail);
    }
    if (!t.notes.empty()) fmt::print(out, "\n");
    for (const auto& note : t.notes) fmt::print(out, "{}\n", note);
  }
};

}  // namespace

std::unique_ptr<table_renderer> make_text_renderer() { return std::make_unique<text_renderer>(); }

}  // namespace blaster
