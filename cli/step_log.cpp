#include "cli/step_log.hpp"

#include <algorithm>
#include <regex>
#include <string_view>

#include <fmt/format.h>

#include "optimize/untrusted_text.hpp"

namespace blaster::cli {

std::string log_lines(const attempt& a, std::size_t lines) {
  std::string out;
  std::size_t shown = 0;
  std::size_t left = 0;
  for (std::size_t at = 0; at < a.log.size();) {
    const std::size_t end = std::min(a.log.find('\n', at), a.log.size());
    const std::string_view line = std::string_view(a.log).substr(at, end - at);
    at = end + 1;
    if (shown == lines) {
      ++left;
    } else if (!line.empty() || shown > 0) {  // no blank line before the first
      out += fmt::format("          {}\n", printable_text(line));
      ++shown;
    }
  }
  if (left > 0) out += fmt::format("          ({} more lines: --json has the whole log)\n", left);
  return out;
}

attempt naming_file(attempt a, const std::filesystem::path& file) {
  if (a.source_sha256.size() < 12) return a;
  // The session writes each candidate as candidate-<its digest's first 12 digits>.cu, the name
  // NVRTC's log uses; the message names it with the run's folder in front.
  const std::regex copy("[^\\s\"']*candidate-" + a.source_sha256.substr(0, 12) + "\\.cu");
  for (std::string* text : {&a.message, &a.log}) {
    *text = std::regex_replace(*text, copy, file.string());
  }
  return a;
}

}  // namespace blaster::cli
