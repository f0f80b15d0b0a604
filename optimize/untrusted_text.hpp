#pragma once

// Text that came from outside blaster (a proposer's reply, a client's request, a row an older
// blaster stored) as blaster keeps, sends and prints it: valid UTF-8, so that every JSON form of
// it can be written and read back; cut only between characters; free of the home's paths; and,
// on a terminal, free of control characters.

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace blaster {

// The offset of the first byte that does not belong to valid UTF-8 (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF), if any.
std::optional<std::size_t> invalid_utf8_at(std::string_view text);

// `text` with every byte that is not valid UTF-8 replaced by U+FFFD.
std::string valid_utf8(std::string_view text);

// The first `max_chars` characters of `text`, made valid UTF-8 first.
std::string first_chars(std::string_view text, std::size_t max_chars);

// At most `max_bytes` bytes of `text`, made valid UTF-8 first, never cut inside a character.
std::string first_bytes(std::string_view text, std::size_t max_bytes);

// For a terminal: `text` made valid UTF-8, with every control character (C0, DEL, C1) and every
// character that reorders text (the bidirectional overrides and isolates) written as an escape
// ("\x1b", "\u202e"), so that a hypothesis cannot move the cursor, color the screen or hide
// words.
std::string printable_text(std::string_view text);

// `text` with every absolute path beneath `home` cut to its file name
// ("/home/u/.blaster/optimize/run-3/candidate-1f.cu:4:2: ..." becomes "candidate-1f.cu:4:2:
// ..."): what blaster sends or exports names no folder of the home.
std::string without_home_paths(std::string_view text, const std::filesystem::path& home);

}  // namespace blaster
