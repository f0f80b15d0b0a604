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

// The first key that appears twice in one object, with its index among all the keys of the text
// (document order): nlohmann keeps the last of two equal keys, and a person who wrote both meant
// one of them. A pass of its own, as nlohmann's parser with a callback scans an object's members
// each time one of them ends: n^2/2 steps for an object of n objects (a tuned table).
class duplicate_key_finder : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::optional<std::pair<std::string, std::size_t>> duplicate;

  bool start_object(std::size_t) override {
    open_objects_.emplace_back();
    return true;
  }
  bool end_object() override {
    open_objects_.pop_back();
    return true;
  }
  bool key(string_t& key) override {
    if (!open_objects_.back().insert(key).second) {
      duplicate.emplace(key, keys_seen_);
      return false;  // the first is the one to name
    }
    ++keys_seen_;
    return true;
  }
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;  // the text parsed already: this does not happen
  }

 private:
  std::vector<std::set<std::string>> open_objects_;
  std::size_t keys_seen_ = 0;
};

// `text` as a Json (ordered_json or json), with json_reader::parse's errors, naming `file`.
template <class Json>
Json parse_as(std::string_view text, const std::string& file) {
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const typename Json::parse_error& e) {
    const auto [line, column] = line_column(text, e.byte == 0 ? 0 : e.byte - 1);
    std::string what = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ..."
    if (const std::size_t at = what.find("] "); at != std::string::npos) what = what.substr(at + 2);
    BLASTER_INPUT_ERROR("{}:{}:{}: invalid JSON: {}; fix the file's syntax", file, line, column,
                        what);
  } catch (const typename Json::exception& e) {
    // nlohmann reports a number beyond a double ("1e999") without its place; find its text.
    const std::string what = e.what();
    const std::size_t open = what.find('\'');
    const std::size_t close = what.rfind('\'');
    if (open != std::string::npos && close > open + 1) {
      const std::string token = what.substr(open + 1, close - open - 1);
      const auto [line, column] = line_column(text, text.find(token));
      BLASTER_INPUT_ERROR(
          "{}:{}:{}: the number {} is beyond the range of a double; write a finite number", file,
          line, column, token);
    }
    BLASTER_INPUT_ERROR("{}: invalid JSON ({}); fix the file", file, what);
  }
  duplicate_key_finder finder;
  nlohmann::json::sax_parse(text, &finder);
  if (const auto& duplicate = finder.duplicate) {
    const auto [line, column] = line_column(text, key_offset(text, duplicate->second));
    BLASTER_INPUT_ERROR("{}:{}:{}: duplicate key \"{}\"; each key may appear once in an object",
                        file, line, column, duplicate->first);
  }
  return doc;
}

}  // namespace

json_reader::json json_reader::parse(std::string_view text) const {
  return parse_as<json>(text, file_);
}

nlohmann::json json_reader::parse_sorted(std::string_view text) const {
  return parse_as<nlohmann::json>(text, file_);
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
