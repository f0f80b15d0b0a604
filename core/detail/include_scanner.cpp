#include "core/detail/include_scanner.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <span>
#include <string>

#include <fmt/format.h>

#include "core/detail/macro_include.hpp"
#include "core/detail/preprocessor_text.hpp"
#include "core/detail/scanned_file.hpp"
#include "core/error.hpp"

namespace blaster::detail {

namespace {

constexpr std::string_view allowed =
    "a candidate may include only the CUDA toolkit's headers by name, such as #include "
    "<cuda_fp16.h>, and the project's shared headers as #include \"common/NAME.cuh\" "
    "(kernels/common/)";

bool is_identifier_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || c == '_' ||
         c == '$' || u >= 0x80;
}

bool is_header_name_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || c == '_' ||
         c == '.' || c == '+' || c == '-' || c == '/';
}

// Walks one file and every common header it reaches.
class include_scanner {
 public:
  include_scanner(const include_roots& roots, std::span<const std::string> defines)
      : roots_(roots) {
    std::error_code ec;
    for (const auto& dir : roots.toolkit) {
      auto canonical = std::filesystem::canonical(dir, ec);
      toolkit_.push_back(ec ? dir : canonical);
    }
    for (const auto& define : defines) {
      const std::string name = define.substr(0, define.find('='));
      defined_.try_emplace(name, fmt::format("the define {} (a param of the plan)", escaped(name)),
                           "rename the param");
    }
  }

  void scan(std::string_view source, std::string_view name) {
    const scanned_file file(source, name);
    scan_directives(file);
    scan_has_include(file);
  }

  std::vector<header_file> reached() && {
    std::vector<header_file> out;
    for (auto& [name, content] : reached_) out.push_back({name, std::move(content)});
    return out;
  }

 private:
  // Skips what may stand between the tokens of a directive: blanks, block comments (phase 3
  // turns each into one space before directives are read, so one may span lines) and bytes
  // outside ASCII (whatever NVRTC makes of them, treating them as space sees more directives,
  // never fewer). Stops at a new-line, at the end, or at anything else.
  static std::size_t skip_gap(const std::string& text, std::size_t i) {
    while (i < text.size()) {
      const char c = text[i];
      if (is_blank(c) || static_cast<unsigned char>(c) >= 0x80) {
        ++i;
      } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
        const std::size_t end = text.find("*/", i + 2);
        if (end == std::string::npos) return text.size();
        i = end + 2;
      } else {
        break;
      }
    }
    return i;
  }

  // A directive may start wherever a line starts, and after the end of a block comment (a
  // comment that began on an earlier line may end right before the '#'). Every such place is
  // tried, inside comments and raw strings too: seeing a directive that NVRTC skips costs a
  // refusal of a strange file, missing one would cost the host's files.
  void scan_directives(const scanned_file& file) {
    const std::string& text = file.text();
    std::set<std::size_t> starts(file.line_starts().begin(), file.line_starts().end());
    for (std::size_t at = text.find("*/"); at != std::string::npos; at = text.find("*/", at + 1)) {
      starts.insert(at + 2);
    }
    for (const std::size_t start : starts) {
      const std::size_t i = skip_gap(text, start);
      if (i >= text.size()) continue;
      // '#', its digraph %:, and its trigraph ??= (which NVRTC ignores, but costs nothing).
      std::size_t after = 0;
      if (text[i] == '#') {
        after = i + 1;
      } else if (text.compare(i, 2, "%:") == 0) {
        after = i + 2;
      } else if (text.compare(i, 3, "?\?=") == 0) {
        after = i + 3;
      } else {
        continue;
      }
      directive(file, i, after);
    }
  }

  void directive(const scanned_file& file, std::size_t hash, std::size_t after) {
    const std::string& text = file.text();
    const std::size_t begin = skip_gap(text, after);
    std::size_t end = begin;
    bool universal = false;  // \u0069nclude
    while (end < text.size()) {
      if (is_identifier_char(text[end])) {
        ++end;
      } else if (text[end] == '\\' && end + 1 < text.size() &&
                 (text[end + 1] == 'u' || text[end + 1] == 'U')) {
        universal = true;
        end += 2;
      } else {
        break;
      }
    }
    const std::string name = text.substr(begin, end - begin);
    if (universal) {
      file.fail(begin, fmt::format("the directive name '{}' is spelled with a universal "
                                   "character name; spell directive names plainly",
                                   escaped(name)));
    }
    if (name == "include") {
      include_operand(file, hash, skip_gap(text, end));
    } else if (name == "define" || name == "undef") {
      macro_name(file, name, skip_gap(text, end));
    } else if (name == "include_next" || name == "import" || name == "embed") {
      file.fail(hash, fmt::format("#{} reads a file that the include policy cannot check; {}", name,
                                  allowed));
    }
  }

  // The macro a #define or #undef names, held against the identifiers that the names of
  // macro-form includes in the toolkit headers reached are built from.
  void macro_name(const scanned_file& file, const std::string& directive, std::size_t at) {
    const std::string& text = file.text();
    std::size_t end = at;
    while (end < text.size() && is_identifier_char(text[end])) ++end;
    if (text.compare(end, 2, "\\u") == 0 || text.compare(end, 2, "\\U") == 0) {
      file.fail(end, fmt::format("the name after #{} is spelled with a universal character "
                                 "name; spell macro names plainly",
                                 directive));
    }
    const std::string macro = text.substr(at, end - at);
    if (macro.empty()) return;
    const auto [it, first] = defined_.try_emplace(
        macro, fmt::format("{}: #{} {}", file.where(at), directive, escaped(macro)),
        "rename the macro");
    if (first) check_pinned(it->first);
  }

  // A macro the candidate defines that a reached toolkit header builds an include's name from.
  void check_pinned(const std::string& macro) const {
    const auto definition = defined_.find(macro);
    const auto pin = pinned_.find(macro);
    if (definition == defined_.end() || pin == pinned_.end()) return;
    BLASTER_INPUT_ERROR(
        "{}: {} reaches {}, which includes a header whose name is built from the macro {}; a "
        "candidate that defines or undefines it could make that include name any file, so it "
        "may not: {}",
        definition->second.where, pin->second.header, pin->second.reached, escaped(macro),
        definition->second.fix);
  }

  void include_operand(const scanned_file& file, std::size_t hash, std::size_t at) {
    const std::string& text = file.text();
    if (at >= text.size() || (text[at] != '<' && text[at] != '"')) {
      file.fail(at < text.size() && text[at] != '\n' ? at : hash,
                fmt::format("#include must name its header directly, as <name> or "
                            "\"common/NAME\": an include through a macro (#include MACRO, "
                            "#include __FILE__) could name any file; {}",
                            allowed));
    }
    const std::size_t close = header_operand(file, at);
    const std::size_t rest = skip_gap(text, close + 1);
    if (rest < text.size() && text[rest] != '\n' && text.compare(rest, 2, "//") != 0) {
      file.fail(rest, "unexpected text after the header name of an #include");
    }
  }

  // Checks the header name that starts at `at` with '<' or '"'; returns where it closes.
  std::size_t header_operand(const scanned_file& file, std::size_t at) {
    const std::string& text = file.text();
    const bool angled = text[at] == '<';
    const char closer = angled ? '>' : '"';
    const std::size_t close = text.find_first_of(std::string{closer, '\n'}, at + 1);
    if (close == std::string::npos || text[close] != closer) {
      file.fail(at, fmt::format("unterminated header name: no closing {} on its line", closer));
    }
    const std::string name = text.substr(at + 1, close - at - 1);
    const std::string shown = escaped(angled ? "<" + name + ">" : "\"" + name + "\"");
    check_name_shape(file, at + 1, name, shown);
    if (angled) {
      toolkit_header(file, at + 1, name, shown);
    } else {
      common_header(file, at + 1, name, shown);
    }
    return close;
  }

  static void check_name_shape(const scanned_file& file, std::size_t at, const std::string& name,
                               const std::string& shown) {
    if (name.empty()) file.fail(at, fmt::format("{}: an empty header name; {}", shown, allowed));
    if (name.front() == '/') {
      file.fail(at, fmt::format("{}: an absolute path; {}", shown, allowed));
    }
    for (std::size_t i = 0; i < name.size(); ++i) {
      if (!is_header_name_char(name[i])) {
        file.fail(at + i, fmt::format("{}: {} in a header name, which may hold only letters, "
                                      "digits and _ . + - /; {}",
                                      shown, printable(name[i]), allowed));
      }
    }
    std::size_t begin = 0;
    while (begin <= name.size()) {
      const std::size_t end = std::min(name.find('/', begin), name.size());
      const std::string_view part = std::string_view(name).substr(begin, end - begin);
      if (part.empty()) {
        file.fail(at + begin, fmt::format("{}: an empty path component; {}", shown, allowed));
      }
      if (part == "..") {
        file.fail(at + begin, fmt::format("{}: a '..' component leaves the folder it names; {}",
                                          shown, allowed));
      }
      if (part == ".") {
        file.fail(at + begin,
                  fmt::format("{}: a '.' component; name the header plainly, {}", shown, allowed));
      }
      begin = end + 1;
    }
  }

  void toolkit_header(const scanned_file& file, std::size_t at, const std::string& name,
                      const std::string& shown) {
    std::error_code ec;
    for (std::size_t d = 0; d < roots_.toolkit.size(); ++d) {
      const std::filesystem::path candidate = roots_.toolkit[d] / name;
      if (!std::filesystem::is_regular_file(candidate, ec)) continue;
      // NVRTC takes the first folder that has it; that file must stay inside the toolkit.
      const auto real = std::filesystem::canonical(candidate, ec);
      if (ec || std::none_of(toolkit_.begin(), toolkit_.end(),
                             [&](const auto& root) { return is_within(real, root); })) {
        file.fail(at,
                  fmt::format("{}: a symbolic link out of the CUDA toolkit; {}", shown, allowed));
      }
      // thrust, and the parts of CUB that use it, name some headers by macros; left to the
      // toolkit's own definitions those name the toolkit's files, so such a header is allowed
      // where the candidate defines none of what the names are built from.
      const macro_named_includes& named = macro_named_includes_of(real, roots_.toolkit);
      if (named.header) {
        // Named as an include would name it: from the innermost toolkit folder that holds it.
        std::filesystem::path reached = *named.header;
        for (const auto& root : toolkit_) {
          const auto relative = named.header->lexically_relative(root);
          if (is_within(*named.header, root) && std::distance(relative.begin(), relative.end()) <
                                                    std::distance(reached.begin(), reached.end())) {
            reached = relative;
          }
        }
        const pin here{.header = fmt::format("{} (included at {})", shown, file.where(at - 1)),
                       .reached = reached.string()};
        for (const auto& id : named.identifiers) {
          if (pinned_.try_emplace(id, here).second) check_pinned(id);
        }
      }
      return;
    }
    std::string searched;
    for (const auto& dir : roots_.toolkit) {
      searched += (searched.empty() ? "" : ", ") + dir.string();
    }
    const std::string hint =
        name.starts_with(common_prefix)
            ? fmt::format(" (a shared header is included as \"{}\")", escaped(name))
            : std::string();
    file.fail(
        at, fmt::format("{}: not a header of the CUDA toolkit (searched {}){}; {}", shown,
                        searched.empty() ? "nothing: no toolkit found" : searched, hint, allowed));
  }

  void common_header(const scanned_file& file, std::size_t at, const std::string& name,
                     const std::string& shown) {
    if (!name.starts_with(common_prefix) || name.size() == common_prefix.size()) {
      std::error_code ec;
      const bool in_toolkit = std::any_of(
          roots_.toolkit.begin(), roots_.toolkit.end(),
          [&](const auto& dir) { return std::filesystem::is_regular_file(dir / name, ec); });
      file.fail(at, fmt::format("{}: a quoted include may name only a shared header, "
                                "\"common/NAME\" (NVRTC would look for anything else in its "
                                "working folder){}; {}",
                                shown,
                                in_toolkit ? fmt::format("; write <{}> for the toolkit's header",
                                                         escaped(name))
                                           : std::string(),
                                allowed));
    }
    if (reached_.contains(name)) return;
    std::optional<std::string> content = roots_.common ? roots_.common(name) : std::nullopt;
    if (!content) {
      file.fail(at, fmt::format("{}: no such header in kernels/common/; {}", shown, allowed));
    }
    // Marked before its own scan, so that headers that include each other end.
    const std::string& stored = reached_.emplace(name, std::move(*content)).first->second;
    try {
      scan(stored, name);
    } catch (const input_error& e) {
      // The violation is the header's; say where the candidate reached it.
      throw input_error(fmt::format("{} (included at {})", e.what(), file.where(at - 1)));
    }
  }

  // __has_include probes the host's files by name; it may name only what #include may. Every
  // occurrence counts, in comments and strings too, and so does any identifier built around it
  // (__has_include_next, __has_embed), since a macro can paste one together.
  void scan_has_include(const scanned_file& file) {
    const std::string& text = file.text();
    // In any case: the toolkit wraps it as _CCCL_HAS_INCLUDE.
    std::string folded = text;
    std::transform(folded.begin(), folded.end(), folded.begin(), [](char c) {
      return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    });
    for (const std::string_view needle : {"has_include", "has_embed"}) {
      for (std::size_t at = folded.find(needle); at != std::string::npos;
           at = folded.find(needle, at + 1)) {
        std::size_t begin = at;
        while (begin > 0 && is_identifier_char(text[begin - 1])) --begin;
        std::size_t end = at + needle.size();
        while (end < text.size() && is_identifier_char(text[end])) ++end;
        const std::string identifier = text.substr(begin, end - begin);
        if (identifier != "__has_include") {
          file.fail(begin, fmt::format("'{}' could probe files outside the allowed set; only "
                                       "__has_include(<toolkit header>) or "
                                       "__has_include(\"common/NAME\") is allowed",
                                       escaped(identifier)));
        }
        std::size_t i = skip_gap(text, end);
        if (i >= text.size() || text[i] != '(') {
          file.fail(begin, "__has_include must be followed by (<name>) or (\"common/NAME\")");
        }
        i = skip_gap(text, i + 1);
        if (i >= text.size() || (text[i] != '<' && text[i] != '"')) {
          file.fail(i, fmt::format("__has_include must name its header directly, as <name> or "
                                   "\"common/NAME\", not through a macro; {}",
                                   allowed));
        }
        i = skip_gap(text, header_operand(file, i) + 1);
        if (i >= text.size() || text[i] != ')') {
          file.fail(i, "expected ')' after the header name of __has_include");
        }
      }
    }
  }

  struct definition {
    std::string where;  // "cand.cu:3:9: #define detail", or which param
    std::string fix;
  };
  struct pin {
    std::string header;   // the toolkit header the candidate included, and where
    std::string reached;  // the header holding the macro-form include
  };

  const include_roots& roots_;
  std::vector<std::filesystem::path> toolkit_;  // canonical
  std::map<std::string, std::string> reached_;  // common header name -> content
  std::map<std::string, definition> defined_;   // macros the candidate defines or undefines
  std::map<std::string, pin> pinned_;           // identifiers macro-form includes are built from
};

}  // namespace

bool is_within(const std::filesystem::path& path, const std::filesystem::path& folder) {
  const auto [f, p] = std::mismatch(folder.begin(), folder.end(), path.begin(), path.end());
  return f == folder.end();
}

std::vector<header_file> scan_includes(std::string_view source, std::string_view file_name,
                                       const include_roots& roots,
                                       std::span<const std::string> defines) {
  include_scanner scanner(roots, defines);
  scanner.scan(source, file_name);
  return std::move(scanner).reached();
}

}  // namespace blaster::detail
