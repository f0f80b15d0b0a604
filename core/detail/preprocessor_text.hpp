#pragma once

#include <string>
#include <string_view>

namespace blaster::detail {

// Blanks inside a line. A carriage return is one too: NVRTC ends lines only at '\n'.
inline bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r';
}

// A byte as a message shows it.
std::string printable(char c);

// The candidate's own text as a message quotes it: printable ASCII, every other byte as \xNN,
// so that a message is always one line of valid UTF-8.
std::string escaped(std::string_view text);

}  // namespace blaster::detail
