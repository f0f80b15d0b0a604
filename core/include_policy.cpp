#include "core/include_policy.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/detail/include_scanner.hpp"
#include "core/detail/preprocessor_text.hpp"
#include "core/file_io.hpp"

namespace blaster {

using detail::common_prefix;
using detail::escaped;
using detail::is_within;
using detail::printable;

std::function<std::optional<std::string>(std::string_view name)> common_headers_in(
    std::filesystem::path folder) {
  std::error_code ec;
  std::filesystem::path canonical_folder =
      folder.empty() ? folder : std::filesystem::canonical(folder, ec);
  if (ec) canonical_folder.clear();
  return [canonical_folder](std::string_view name) -> std::optional<std::string> {
    if (canonical_folder.empty() || !name.starts_with(common_prefix)) return std::nullopt;
    std::error_code error;
    const auto path =
        std::filesystem::canonical(canonical_folder / name.substr(common_prefix.size()), error);
    if (error || !is_within(path, canonical_folder) ||
        !std::filesystem::is_regular_file(path, error)) {
      return std::nullopt;
    }
    return read_file(path);
  };
}

std::vector<header_file> resolve_includes(std::string_view source, std::string_view file_name,
                                          const include_roots& roots,
                                          std::span<const std::string> defines) {
  return detail::scan_includes(source, file_name, roots, defines);
}

std::string check_preprocessor_inputs(const compile_request& request) {
  auto check = [&](std::string_view what, const std::string& text) -> std::string {
    for (const char c : text) {
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x20 || u == 0x7F) {
        return fmt::format(
            "the {} \"{}\" holds a control character ({}); name expressions and "
            "param values reach NVRTC's preprocessor and must be one line of plain "
            "text",
            what, escaped(text), printable(c));
      }
    }
    std::string folded = text;
    std::transform(folded.begin(), folded.end(), folded.begin(), [](char c) {
      return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    });
    if (folded.find("has_include") != std::string::npos ||
        folded.find("has_embed") != std::string::npos) {
      return fmt::format(
          "the {} \"{}\" names __has_include or __has_embed, which could probe "
          "files outside the allowed set",
          what, escaped(text));
    }
    return {};
  };
  for (const auto& define : request.defines) {
    if (auto why = check("define", define); !why.empty()) return why;
  }
  for (const auto& name : request.name_expressions) {
    if (auto why = check("kernel name", name); !why.empty()) return why;
  }
  return {};
}

}  // namespace blaster
