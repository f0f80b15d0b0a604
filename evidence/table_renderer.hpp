#pragma once

#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <string_view>

#include "evidence/result_table.hpp"

namespace blaster {

// Writes a result table in one output format. A new format is one new renderer and its row in
// output_formats().
class table_renderer {
 public:
  virtual ~table_renderer() = default;
  void render(const result_table& table, std::ostream& out) const { do_render(table, out); }

 private:
  virtual void do_render(const result_table& table, std::ostream& out) const = 0;
};

struct output_format {
  std::string_view name;  // as --format spells it
  std::string_view help;
  std::unique_ptr<table_renderer> (*make)();
};

// Every format, the default (table) first.
std::span<const output_format> output_formats();
// nullptr for a name that is not a format.
std::unique_ptr<table_renderer> make_renderer(std::string_view name);
// "table, json, md or csv"
std::string output_format_choices();

// Text safe inside a Markdown table cell: one line, no cell separators.
std::string markdown_cell(std::string_view text);

}  // namespace blaster
