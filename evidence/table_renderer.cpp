#include "evidence/table_renderer.hpp"

#include <array>

namespace blaster {

// The renderers, each in its own file under evidence/renderers/.
std::unique_ptr<table_renderer> make_text_renderer();
std::unique_ptr<table_renderer> make_json_renderer();
std::unique_ptr<table_renderer> make_markdown_renderer();
std::unique_ptr<table_renderer> make_csv_renderer();

namespace {

constexpr std::array formats{
    output_format{"table", "aligned columns for a terminal", make_text_renderer},
    output_format{"json", "exact JSON", make_json_renderer},
    output_format{"md", "a Markdown table", make_markdown_renderer},
    output_format{"csv", "comma-separated values, a header of the columns' tags",
                  make_csv_renderer},
};

}  // namespace

std::span<const output_format> output_formats() { return formats; }

std::unique_ptr<table_renderer> make_renderer(std::string_view name) {
  for (const auto& f : formats) {
    if (f.name == name) return f.make();
  }
  return nullptr;
}

std::string output_format_choices() {
  std::string out;
  for (std::size_t i = 0; i < formats.size(); ++i) {
    if (i > 0) out += i + 1 == formats.size() ? " or " : ", ";
    out += formats[i].name;
  }
  return out;
}

}  // namespace blaster
