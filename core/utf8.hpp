#pragma once

#include <cstddef>
#include <string_view>

namespace blaster {

// The length of the valid UTF-8 sequence at s[i], or 0 where the byte starts none (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF). i < s.size().
std::size_t utf8_sequence_length(std::string_view s, std::size_t i);

}  // namespace blaster
