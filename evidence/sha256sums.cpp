#include "evidence/sha256sums.hpp"

#include <set>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/sha256.hpp"

namespace blaster {
namespace {

constexpr std::size_t digest_chars = 64;
// PATH_MAX: a longer name cannot be opened anyway.
constexpr std::size_t max_path_chars = 4096;

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

}  // namespace

std::string unsafe_path_reason(std::string_view path) {
  if (path.empty()) return "the path is empty";
  if (path.size() > max_path_chars)
    return fmt::format("the path is longer than {} bytes", max_path_chars);
  if (path.front() == '/') return "the path is absolute; paths are relative to the bundle";
  for (const char c : path) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) return "the path holds a control character";
  }
  std::size_t begin = 0;
  for (;;) {
    const std::size_t end = path.find('/', begin);
    const std::string_view part =
        path.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin);
    if (part.empty()) return "the path has an empty component ('//' or a trailing '/')";
    if (part == "..") return "the path has a '..' component, which could leave the bundle";
    if (part == ".") return "the path has a '.' component";
    if (end == std::string_view::npos) break;
    begin = end + 1;
  }
  return {};
}

sha256sums_lines read_sha256sums_lines(std::string_view text) {
  sha256sums_lines out;
  std::set<std::string, std::less<>> seen;
  if (text.empty()) {
    out.bad_lines.push_back({1, "the manifest is empty"});
    return out;
  }
  int line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const std::size_t newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    std::string why = [&]() -> std::string {
      if (line.empty()) return "blank line";
      if (line.back() == '\r') return "the line ends with CR (a Windows line end)";
      if (line.front() == '\\') return "escaped file names are not supported";
      if (line.size() < digest_chars + 3) return "the line is too short";
      for (std::size_t i = 0; i < digest_chars; ++i) {
        if (!is_hex(line[i])) {
          return fmt::format("character {} of the digest is not a hex digit", i + 1);
        }
      }
      if (line[digest_chars] != ' ' ||
          (line[digest_chars + 1] != ' ' && line[digest_chars + 1] != '*')) {
        return "the digest must be followed by two spaces (or ' *') and the path";
      }
      const std::string_view path = line.substr(digest_chars + 2);
      if (const std::string unsafe = unsafe_path_reason(path); !unsafe.empty()) {
        return fmt::format("'{}': {}", path, unsafe);
      }
      if (seen.contains(path)) return fmt::format("'{}' is listed twice", path);
      return {};
    }();
    if (!why.empty()) {
      out.bad_lines.push_back({line_number, std::move(why)});
      continue;
    }
    std::string sha256(line.substr(0, digest_chars));
    for (char& c : sha256) {
      if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
    }
    std::string path(line.substr(digest_chars + 2));
    seen.insert(path);
    out.entries.push_back(sha256sums_entry{.sha256 = std::move(sha256), .path = std::move(path)});
  }
  return out;
}

std::vector<sha256sums_entry> parse_sha256sums(std::string_view text, std::string_view file_name) {
  sha256sums_lines lines = read_sha256sums_lines(text);
  if (!lines.bad_lines.empty()) {
    const auto& bad = lines.bad_lines.front();
    BLASTER_INPUT_ERROR(
        "{}:{}: {}; each line must be '<64 hex digits>  <relative path>', as sha256sum writes "
        "it",
        file_name, bad.line, bad.why);
  }
  return std::move(lines.entries);
}

std::string format_sha256sums(const std::vector<sha256sums_entry>& entries) {
  std::string out;
  for (const auto& e : entries) {
    if (!is_sha256_hex(e.sha256))
      BLASTER_THROW("SHA256SUMS: '{}' is not a SHA-256 digest", e.sha256);
    if (const std::string why = unsafe_path_reason(e.path); !why.empty()) {
      BLASTER_THROW("SHA256SUMS: cannot list '{}': {}", e.path, why);
    }
    out += e.sha256;
    out += "  ";
    out += e.path;
    out += '\n';
  }
  return out;
}

}  // namespace blaster
