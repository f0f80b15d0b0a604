#include "optimize/untrusted_text.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "core/utf8.hpp"

namespace blaster {
namespace {

constexpr std::string_view replacement = "\xEF\xBF\xBD";  // U+FFFD

// The code point of the valid sequence s[i, i + length).
char32_t code_point(std::string_view s, std::size_t i, std::size_t length) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  if (length == 1) return byte(i);
  char32_t c = byte(i) & (0xFF >> (length + 1));
  for (std::size_t k = 1; k < length; ++k) c = (c << 6) | (byte(i + k) & 0x3F);
  return c;
}

bool hidden_from_a_reader(char32_t c) {
  return c < 0x20 || c == 0x7F || (c >= 0x80 && c <= 0x9F) ||  // control characters
         c == 0x200E || c == 0x200F || (c >= 0x202A && c <= 0x202E) ||  // marks, overrides
         (c >= 0x2066 && c <= 0x2069);                                // isolates
}

// A byte that may continue a path: a path ends at the first byte that may not.
bool in_path(char c) {
  return c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != ':' && c != '(' && c != ')' &&
         c != '\'' && c != '"' && c != ',' && c != ';' && c != '[' && c != ']' && c != '<' &&
         c != '>' && c != '`';
}

}  // namespace

std::optional<std::size_t> invalid_utf8_at(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_sequence_length(text, i);
    if (length == 0) return i;
    i += length;
  }
  return std::nullopt;
}

std::string valid_utf8(std::string_view text) {
  if (!invalid_utf8_at(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 8);
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_sequence_length(text, i);
    if (length == 0) {
      out += replacement;
      ++i;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

std::string first_chars(std::string_view text, std::size_t max_chars) {
  std::string valid = valid_utf8(text);
  std::size_t at = 0;
  for (std::size_t chars = 0; at < valid.size() && chars < max_chars; ++chars) {
    at += utf8_sequence_length(valid, at);
  }
  valid.resize(at);
  return valid;
}

std::string first_bytes(std::string_view text, std::size_t max_bytes) {
  std::string valid = valid_utf8(text);
  if (valid.size() <= max_bytes) return valid;
  std::size_t at = max_bytes;
  // Back to the first byte of the character the cut would split.
  while (at > 0 && (static_cast<unsigned char>(valid[at]) & 0xC0) == 0x80) --at;
  valid.resize(at);
  return valid;
}

std::string printable_text(std::string_view text) {
  const std::string valid = valid_utf8(text);
  std::string out;
  out.reserve(valid.size());
  for (std::size_t i = 0; i < valid.size();) {
    const std::size_t length = utf8_sequence_length(valid, i);
    const char32_t c = code_point(valid, i, length);
    if (!hidden_from_a_reader(c)) {
      out.append(valid, i, length);
    } else if (c < 0x80) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(c));
    } else {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    }
    i += length;
  }
  return out;
}

std::string without_home_paths(std::string_view text, const std::filesystem::path& home) {
  if (home.empty()) return std::string(text);
  // The home as it was given and as the file system resolves it: messages quote either.
  std::vector<std::string> forms;
  auto add = [&](std::filesystem::path p) {
    std::string s = p.lexically_normal().string();
    while (s.size() > 1 && s.back() == '/') s.pop_back();
    if (!s.empty() && s != "." && s != "/" && std::find(forms.begin(), forms.end(), s) == forms.end()) {
      forms.push_back(std::move(s));
    }
  };
  add(home);
  std::error_code ec;
  if (const auto absolute = std::filesystem::absolute(home, ec); !ec) add(absolute);
  if (const auto canonical = std::filesystem::weakly_canonical(home, ec); !ec) add(canonical);
  // The longest first, so that a shorter form never cuts a longer one's match in two.
  std::sort(forms.begin(), forms.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  std::string out(text);
  for (const std::string& form : forms) {
    for (std::size_t at = out.find(form); at != std::string::npos; at = out.find(form, at)) {
      if (at > 0 && in_path(out[at - 1]) && out[at - 1] != '=') {
        at += form.size();  // inside a longer path: not the home
        continue;
      }
      std::size_t end = at + form.size();
      while (end < out.size() && in_path(out[end])) ++end;
      const std::size_t last_slash = out.rfind('/', end - 1);
      if (last_slash == std::string::npos || last_slash < at) {
        at = end;  // the home's own name, with no folder before it
        continue;
      }
      out.erase(at, last_slash + 1 - at);
    }
  }
  return out;
}

}  // namespace blaster
