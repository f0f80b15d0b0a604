#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace blaster::detail {

// One file under scan: its text with every line splice removed, and the way back to the
// places of the file. A splice here is a backslash, any blanks, then a new-line; NVRTC splices
// only a backslash right before the new-line, so this joins lines that NVRTC may keep apart, and
// the scan looks at every physical line start on its own for that reason.
class scanned_file {
 public:
  scanned_file(std::string_view source, std::string_view name);

  [[nodiscard]] const std::string& text() const { return text_; }
  [[nodiscard]] std::string_view name() const { return name_; }
  // Where a physical line of the file began, as indices into text().
  [[nodiscard]] const std::vector<std::size_t>& line_starts() const { return line_starts_; }

  // "file:line:col" of text()[at], in the file as written: lines counted at '\n', columns in
  // bytes from 1.
  [[nodiscard]] std::string where(std::size_t at) const;

  [[noreturn]] void fail(std::size_t at, std::string_view message) const;

 private:
  std::string_view source_;
  std::string name_;
  std::string text_;
  std::vector<std::size_t> origin_;
  std::vector<std::size_t> line_starts_;
  std::vector<std::size_t> source_lines_;
};

}  // namespace blaster::detail
