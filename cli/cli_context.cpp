#include "cli/cli_context.hpp"

#include <algorithm>
#include <cstdlib>
#include <iterator>

#include "core/error.hpp"
#include "evidence/table_renderer.hpp"

namespace blaster::cli {

std::filesystem::path resolve_root(const global_options& options) {
  auto is_root = [](const std::filesystem::path& p) {
    std::error_code ignored;
    return std::filesystem::is_directory(p / "tasks", ignored);
  };
  if (options.root) {
    if (!is_root(*options.root)) {
      BLASTER_INPUT_ERROR("--root {}: no tasks/ folder there", options.root->string());
    }
    return *options.root;
  }
  if (const char* env = std::getenv("BLASTER_ROOT"); env != nullptr && *env != '\0') {
    if (!is_root(env)) BLASTER_INPUT_ERROR("BLASTER_ROOT={}: no tasks/ folder there", env);
    return env;
  }
  for (auto dir = std::filesystem::current_path();; dir = dir.parent_path()) {
    if (is_root(dir)) return dir;
    if (dir == dir.root_path()) break;
  }
  if (is_root(BLASTER_SOURCE_DIR)) return BLASTER_SOURCE_DIR;
  BLASTER_INPUT_ERROR(
      "no tasks/ folder found at or above {}; run blaster from the project "
      "folder or pass --root DIR",
      std::filesystem::current_path().string());
}

void require_format(const global_options& options, std::initializer_list<std::string_view> known,
                    std::string_view command) {
  require_format(options, std::vector<std::string_view>(known), command);
}

void require_format(const global_options& options, const std::vector<std::string_view>& known,
                    std::string_view command) {
  for (std::string_view f : known) {
    if (f == options.format) return;
  }
  std::string names;
  for (std::string_view f : known) names += (names.empty() ? "" : ", ") + std::string(f);
  BLASTER_INPUT_ERROR("--format {}: {} prints {} only", options.format, command, names);
}

std::vector<std::string_view> formats_of(std::string_view command) {
  // These build a result_table and hand it to make_renderer(--format).
  static constexpr std::string_view tables[] = {"bench",   "compile", "compare",
                                                "history", "profile", "memory"};
  if (std::find(std::begin(tables), std::end(tables), command) != std::end(tables)) {
    std::vector<std::string_view> all;
    for (const auto& f : output_formats()) all.push_back(f.name);
    return all;
  }
  if (command == "portfolio") return {"table", "md", "json"};
  return {"table", "json"};
}

}  // namespace blaster::cli
