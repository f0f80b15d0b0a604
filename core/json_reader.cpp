#include "core/json_reader.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"

namespace blaster {

namespace {

// 1-based line and column of a byte offset.
std::pair<std::size_t, std::size_t> line_column(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  std::size_t line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return {line, offset - line_start + 1};
}

// Offset of the index-th key (0-based, in document order) of a JSON text that parsed.
std::size_t key_offset(std::string_view text, std::size_t index) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '"') continue;
    const std::size_t begin = i++;
    while (i < text.size() && text[i] != '"') i += text[i] == '\\' ? 2 : 1;
    std::size_t after = i + 1;
    while (after < text.size() && std::isspace(static_cast<unsigned char>(text[after]))) ++after;
    if (after < text.size() && text[after] == ':' && seen++ == index) return begin;
  }
  return text.size();
}

}  // namespace

json_reader::json json_reader::parse(std::string_view text) const {
  // nlohmann keeps the last of two equal keys; a person who wrote both meant one of them.
  std::vector<std::set<std::string>> open_objects;
  std::size_t keys_seen = 0;
  std::optional<std::pair<std::string, std::size_t>> duplicate;
  const json::parser_callback_t track = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      open_objects.emplace_back();
    } else if (event == json::parse_event_t::object_end) {
      open_objects.pop_back();
    } else if (event == json::parse_event_t::key) {
      const std::string key = parsed.get<std::string>();
      if (!open_objects.empty() && !open_objects.back().insert(key).second && !duplicate) {
        duplicate.emplace(key, keys_seen);
      }
      ++keys_seen;
    }
    return true;
  };
  json doc;
  try {
    doc = json::parse(text, track);
  } catch (const json::parse_error& e) {
    const auto [line, column] = line_column(text, e.byte == 0 ? 0 : e.byte - 1);
    std::string what = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ..."
    if (const std::size_t at = what.find("] "); at != std::string::npos) what = what.substr(at + 2);
    BLASTER_INPUT_ERROR("{}:{}:{}: invalid JSON: {}; fix the file's syntax", file_, line, column,
                        what);
  } catch (const json::exception& e) {
    // nlohmann reports a number beyond a double ("1e999") without its place; find its text.
    const std::string what = e.what();
    const std::size_t open = what.find('\'');
    const std::size_t close = what.rfind('\'');
    if (open != std::string::npos && close > open + 1) {
      const std::string token = what.substr(open + 1, close - open - 1);
      const auto [line, column] = line_column(text, text.find(token));
      BLASTER_INPUT_ERROR(
          "{}:{}:{}: the number {} is beyond the range of a double; write a finite number", file_,
          line, column, token);
    }
    BLASTER_INPUT_ERROR("{}: invalid JSON ({}); fix the file", file_, what);
  }
  if (duplicate) {
    const auto [line, column] = line_column(text, key_offset(text, duplicate->second));
    BLASTER_INPUT_ERROR("{}:{}:{}: duplicate key \"{}\"; each key may appear once in an object",
                        file_, line, column, duplicate->first);
  }
  return doc;
}

void json_reader::fail(std::string_view where, std::string_view what) const {
  BLASTER_INPUT_ERROR("{}: {}: {}", file_, where, what);
}

void json_reader::only_keys(const json& object, std::string_view where,
                            std::initializer_list<std::string_view> allowed) const {
  if (!object.is_object()) fail(where, "must be an object");
  for (const auto& [key, value] : object.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      fail(where, fmt::format("unknown key \"{}\" (allowed: {})", key, fmt::join(allowed, ", ")));
    }
  }
}

std::string json_reader::text(const json& object, std::string_view where, const char* key,
                              std::optional<std::string> fallback) const {
  if (!object.contains(key)) {
    if (fallback) return *fallback;
    fail(where, fmt::format("missing \"{}\"", key));
  }
  if (!object[key].is_string()) fail(fmt::format("{}.{}", where, key), "must be a string");
  return object[key].get<std::string>();
}

double json_reader::number(const json& object, std::string_view where, const char* key,
                           std::optional<double> fallback) const {
  if (!object.contains(key)) {
    if (fallback) return *fallback;
    fail(where, fmt::format("missing \"{}\"", key));
  }
  if (!object[key].is_number()) fail(fmt::format("{}.{}", where, key), "must be a number");
  return object[key].get<double>();
}

}  // namespace blaster
