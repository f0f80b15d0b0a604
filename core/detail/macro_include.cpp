#include "core/detail/macro_include.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "core/detail/preprocessor_text.hpp"
#include "core/file_io.hpp"

namespace blaster::detail {

std::optional<std::filesystem::path> reaches_macro_include(
    const std::filesystem::path& header, const std::vector<std::filesystem::path>& toolkit) {
  static std::mutex mutex;
  static std::map<std::filesystem::path, std::optional<std::filesystem::path>> known;
  const std::lock_guard lock(mutex);
  if (const auto it = known.find(header); it != known.end()) return it->second;
  std::optional<std::filesystem::path> found;
  std::set<std::filesystem::path> seen{header};
  std::vector<std::filesystem::path> pending{header};
  std::error_code ec;
  while (!pending.empty() && !found) {
    const std::filesystem::path file = pending.back();
    pending.pop_back();
    std::string text = read_file(file);
    // Line splices joined, as the preprocessor joins them.
    for (std::size_t at = text.find("\\\n"); at != std::string::npos; at = text.find("\\\n", at)) {
      text.erase(at, 2);
    }
    for (std::size_t line = 0; line < text.size() && !found;) {
      const std::size_t end = std::min(text.find('\n', line), text.size());
      std::size_t i = line;
      auto skip_blanks = [&] {
        while (i < end && is_blank(text[i])) ++i;
      };
      skip_blanks();
      if (i < end && text[i] == '#') {
        ++i;
        skip_blanks();
        if (text.compare(i, 7, "include") == 0) {
          i += 7;
          if (text.compare(i, 5, "_next") == 0) i += 5;
          skip_blanks();
          if (i < end && (text[i] == '<' || text[i] == '"')) {
            const char closer = text[i] == '<' ? '>' : '"';
            const std::size_t close = text.find(closer, i + 1);
            if (close < end) {
              const std::string name = text.substr(i + 1, close - i - 1);
              std::vector<std::filesystem::path> candidates;
              if (closer == '"') candidates.push_back(file.parent_path() / name);
              for (const auto& dir : toolkit) candidates.push_back(dir / name);
              for (const auto& candidate : candidates) {
                if (!std::filesystem::is_regular_file(candidate, ec)) continue;
                const auto real = std::filesystem::canonical(candidate, ec);
                if (!ec && seen.insert(real).second) pending.push_back(real);
                break;
              }
            }
          } else if (i < end) {
            found = file;
          }
        }
      }
      line = end + 1;
    }
  }
  known[header] = found;
  return found;
}

}  // namespace blaster::detail
