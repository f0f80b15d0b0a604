#include "core/detail/json_positions.hpp"

#include <functional>
#include <set>

#include <nlohmann/json.hpp>

namespace blaster::detail {

namespace {

using json = nlohmann::ordered_json;

// The plan's schema is four levels deep; anything far deeper is hostile input.
constexpr int max_json_depth = 64;

}  // namespace

std::string child(const std::string& pointer, std::string_view key) {
  std::string out = pointer + "/";
  for (const char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}
std::string child(const std::string& pointer, std::size_t index) {
  return pointer + "/" + std::to_string(index);
}

json_positions::json_positions(std::string_view text) : text_(text) {
  skip_space();
  value("", 0);
}

void json_positions::skip_space() {
  while (pos_ < text_.size() && is_json_space(text_[pos_])) ++pos_;
}

std::string_view json_positions::string_literal() {
  const std::size_t begin = pos_++;
  while (text_[pos_] != '"') pos_ += text_[pos_] == '\\' ? 2 : 1;
  ++pos_;
  return text_.substr(begin, pos_ - begin);
}

void json_positions::value(const std::string& pointer, int depth) {
  values_[pointer] = pos_;
  if (depth > max_json_depth) {
    if (!too_deep_) too_deep_ = pos_;
    stop();
    return;
  }
  const char c = text_[pos_];
  if (c == '{') {
    object(pointer, depth);
  } else if (c == '[') {
    array(pointer, depth);
  } else if (c == '"') {
    string_literal();
  } else {
    while (pos_ < text_.size() && !is_json_space(text_[pos_]) && text_[pos_] != ',' &&
           text_[pos_] != ']' && text_[pos_] != '}') {
      ++pos_;
    }
  }
}

void json_positions::object(const std::string& pointer, int depth) {
  ++pos_;
  skip_space();
  std::set<std::string, std::less<>> seen;
  while (!stopped_ && text_[pos_] != '}') {
    const std::size_t key_offset = pos_;
    const std::string_view raw = string_literal();
    // Escaped keys are rare; let nlohmann decode them rather than repeat its rules.
    const std::string key = raw.find('\\') == std::string_view::npos
                                ? std::string(raw.substr(1, raw.size() - 2))
                                : json::parse(raw).get<std::string>();
    if (!seen.insert(key).second && !duplicate_) duplicate_ = duplicate_key{key, key_offset};
    const std::string member = child(pointer, key);
    keys_[member] = key_offset;
    skip_space();
    ++pos_;  // ':'
    skip_space();
    value(member, depth + 1);
    skip_space();
    if (!stopped_ && text_[pos_] == ',') {
      ++pos_;
      skip_space();
    }
  }
  ++pos_;
}

void json_positions::array(const std::string& pointer, int depth) {
  ++pos_;
  skip_space();
  for (std::size_t index = 0; !stopped_ && text_[pos_] != ']'; ++index) {
    value(child(pointer, index), depth + 1);
    skip_space();
    if (!stopped_ && text_[pos_] == ',') {
      ++pos_;
      skip_space();
    }
  }
  ++pos_;
}

void json_positions::stop() {
  stopped_ = true;
  pos_ = text_.size();
}

}  // namespace blaster::detail
