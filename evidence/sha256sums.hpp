#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace blaster {

// One line of a SHA256SUMS manifest: a file, by its path relative to the manifest's folder.
struct sha256sums_entry {
  std::string sha256;  // 64 lowercase hex digits
  std::string path;    // relative, '/'-separated, no '.', '..' or empty components
};

// Parses the format `sha256sum` writes and `sha256sum -c` reads: "<digest>  <path>" (text mode)
// or "<digest> *<path>" (binary mode), one per line. Stricter than sha256sum where a looser
// reading could point outside the bundle or hide a file: every line must be well formed (no
// blank lines, comments, CR line ends, escaped names or control characters); paths must be
// relative with no '.', '..' or empty components; a path may appear once. Any violation is a
// blaster::input_error "<file_name>:<line>: <what>; <how to fix>"; nothing else is thrown.
std::vector<sha256sums_entry> parse_sha256sums(std::string_view text,
                                               std::string_view file_name = "SHA256SUMS");

// What a manifest says line by line: the good lines, and why each bad line is bad. For a
// checker that must report every problem, not just the first.
struct sha256sums_lines {
  struct bad_line {
    int line = 0;  // 1-based
    std::string why;
  };
  std::vector<sha256sums_entry> entries;
  std::vector<bad_line> bad_lines;
};
sha256sums_lines read_sha256sums_lines(std::string_view text);

// The manifest's text, text mode, one line per entry in the given order; every entry must be
// one that parse_sha256sums accepts (blaster::error otherwise).
std::string format_sha256sums(const std::vector<sha256sums_entry>& entries);

// Empty when the path is one a manifest may name; otherwise why not.
std::string unsafe_path_reason(std::string_view path);

}  // namespace blaster
