#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace blaster::detail {

inline bool is_json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// JSON pointer of a child, escaped as RFC 6901 says so that any key maps to one pointer.
std::string child(const std::string& pointer, std::string_view key);
std::string child(const std::string& pointer, std::size_t index);

// Where every value and key of an already valid JSON text starts. nlohmann 3.11 keeps no
// positions, so this walks the text once more; unlike searching for a string's text, it maps
// repeated texts ("B*C" twice) to the right place.
class json_positions {
 public:
  struct duplicate_key {
    std::string key;
    std::size_t offset;
  };

  explicit json_positions(std::string_view text);

  // Offsets into the text; the root's pointer is "".
  std::size_t value_at(const std::string& pointer) const { return values_.at(pointer); }
  std::size_t key_at(const std::string& pointer) const { return keys_.at(pointer); }
  const std::optional<duplicate_key>& duplicate() const { return duplicate_; }
  std::optional<std::size_t> too_deep() const { return too_deep_; }

 private:
  void skip_space();
  std::string_view string_literal();
  void value(const std::string& pointer, int depth);
  void object(const std::string& pointer, int depth);
  void array(const std::string& pointer, int depth);
  void stop();

  std::string_view text_;
  std::size_t pos_ = 0;
  bool stopped_ = false;
  std::map<std::string, std::size_t> values_;
  std::map<std::string, std::size_t> keys_;
  std::optional<duplicate_key> duplicate_;
  std::optional<std::size_t> too_deep_;
};

}  // namespace blaster::detail
