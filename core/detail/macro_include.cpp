#include "core/detail/macro_include.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "core/detail/preprocessor_text.hpp"
#include "core/file_io.hpp"

namespace blaster::detail {
namespace {

bool starts_identifier(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool continues_identifier(char c) { return starts_identifier(c) || (c >= '0' && c <= '9'); }

// The identifiers of a piece of a line, outside string and character literals and comments.
std::vector<std::string> identifiers_in(std::string_view text) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"' || c == '\'') {
      for (++i; i < text.size() && text[i] != c; ++i) {
        if (text[i] == '\\') ++i;
      }
      ++i;
    } else if (text.substr(i, 2) == "//") {
      break;
    } else if (text.substr(i, 2) == "/*") {
      const std::size_t end = text.find("*/", i + 2);
      i = end == std::string_view::npos ? text.size() : end + 2;
    } else if (starts_identifier(c)) {
      const std::size_t begin = i;
      while (i < text.size() && continues_identifier(text[i])) ++i;
      out.emplace_back(text.substr(begin, i - begin));
    } else if (c >= '0' && c <= '9') {
      while (i < text.size() && (continues_identifier(text[i]) || text[i] == '.')) ++i;
    } else {
      ++i;
    }
  }
  return out;
}

// What one walk collects from the headers it reads.
struct walk {
  macro_named_includes found;
  std::set<std::string> named_by;                         // tokens after a macro-form #include
  std::map<std::string, std::set<std::string>> replaced;  // macro -> identifiers of its lists
};

// One directive line of a reached header: follows a named include, keeps a macro-form one's
// tokens and every definition's replacement list.
void read_directive(const std::filesystem::path& file, std::string_view line, walk& w,
                    const std::vector<std::filesystem::path>& toolkit,
                    std::set<std::filesystem::path>& seen,
                    std::vector<std::filesystem::path>& pending) {
  std::size_t i = 0;
  const auto skip_blanks = [&] {
    while (i < line.size() && is_blank(line[i])) ++i;
  };
  skip_blanks();
  if (i >= line.size() || line[i] != '#') return;
  ++i;
  skip_blanks();
  if (line.substr(i, 7) == "include") {
    i += 7;
    if (line.substr(i, 5) == "_next") i += 5;
    skip_blanks();
    if (i < line.size() && (line[i] == '<' || line[i] == '"')) {
      const char closer = line[i] == '<' ? '>' : '"';
      const std::size_t close = line.find(closer, i + 1);
      if (close == std::string_view::npos) return;
      const std::string name(line.substr(i + 1, close - i - 1));
      std::vector<std::filesystem::path> candidates;
      if (closer == '"') candidates.push_back(file.parent_path() / name);
      for (const auto& dir : toolkit) candidates.push_back(dir / name);
      std::error_code ec;
      for (const auto& candidate : candidates) {
        if (!std::filesystem::is_regular_file(candidate, ec)) continue;
        const auto real = std::filesystem::canonical(candidate, ec);
        if (!ec && seen.insert(real).second) pending.push_back(real);
        break;
      }
    } else if (i < line.size()) {
      if (!w.found.header) w.found.header = file;
      for (auto& id : identifiers_in(line.substr(i))) w.named_by.insert(std::move(id));
    }
  } else if (line.substr(i, 6) == "define") {
    i += 6;
    skip_blanks();
    const std::size_t begin = i;
    while (i < line.size() && continues_identifier(line[i])) ++i;
    if (i == begin) return;
    const std::string name(line.substr(begin, i - begin));
    std::set<std::string> parameters;  // a function-like macro's own names, local to it
    if (i < line.size() && line[i] == '(') {
      const std::size_t close = line.find(')', i);
      if (close == std::string_view::npos) return;
      for (auto& p : identifiers_in(line.substr(i + 1, close - i - 1))) parameters.insert(p);
      i = close + 1;
    }
    std::set<std::string>& list = w.replaced[name];
    for (auto& id : identifiers_in(line.substr(i))) {
      if (!parameters.contains(id)) list.insert(std::move(id));
    }
  }
}

macro_named_includes walk_from(const std::filesystem::path& header,
                               const std::vector<std::filesystem::path>& toolkit) {
  walk w;
  std::set<std::filesystem::path> seen{header};
  std::vector<std::filesystem::path> pending{header};
  while (!pending.empty()) {
    const std::filesystem::path file = pending.back();
    pending.pop_back();
    std::string text = read_file(file);
    // Line splices joined, as the preprocessor joins them.
    for (std::size_t at = text.find("\\\n"); at != std::string::npos; at = text.find("\\\n", at)) {
      text.erase(at, 2);
    }
    for (std::size_t line = 0; line < text.size();) {
      const std::size_t end = std::min(text.find('\n', line), text.size());
      read_directive(file, std::string_view(text).substr(line, end - line), w, toolkit, seen,
                     pending);
      line = end + 1;
    }
  }
  // The closure: what the names are made of, and what those are defined as, on to the end.
  std::vector<std::string> open(w.named_by.begin(), w.named_by.end());
  while (!open.empty()) {
    std::string id = std::move(open.back());
    open.pop_back();
    if (!w.found.identifiers.insert(id).second) continue;
    if (const auto it = w.replaced.find(id); it != w.replaced.end()) {
      open.insert(open.end(), it->second.begin(), it->second.end());
    }
  }
  return std::move(w.found);
}

}  // namespace

const macro_named_includes& macro_named_includes_of(
    const std::filesystem::path& header, const std::vector<std::filesystem::path>& toolkit) {
  static std::mutex mutex;
  static std::map<std::filesystem::path, macro_named_includes> known;
  const std::lock_guard lock(mutex);
  if (const auto it = known.find(header); it != known.end()) return it->second;
  return known.emplace(header, walk_from(header, toolkit)).first->second;
}

}  // namespace blaster::detail
