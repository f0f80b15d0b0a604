#include "core/detail/preprocessor_text.hpp"

#include <fmt/format.h>

namespace blaster::detail {

std::string printable(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 0x20 && u < 0x7F ? fmt::format("'{}'", c) : fmt::format("byte 0x{:02X}", u);
}

std::string escaped(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, 120)) {
    const auto u = static_cast<unsigned char>(c);
    out += u >= 0x20 && u < 0x7F ? std::string(1, c) : fmt::format("\\x{:02X}", u);
  }
  if (text.size() > 120) out += "...";
  return out;
}

}  // namespace blaster::detail
