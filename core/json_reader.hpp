#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace blaster {

// Validation of a JSON file a person wrote (a task, a suite): every failure is an input_error
// that names the file, the JSON path ("cases[2].symbols.B") and what is expected there.
class json_reader {
 public:
  using json = nlohmann::ordered_json;

  explicit json_reader(std::string file) : file_(std::move(file)) {}

  // The file's text as JSON. Malformed text, a number beyond a double and a key that appears
  // twice in one object are input_errors at the file's line and column.
  json parse(std::string_view text) const;
  // The same, its objects' keys sorted instead of in the file's order: ordered_json finds a key
  // by a linear search, so that an object of n keys takes n^2/2 comparisons to parse (a tuned
  // table of a million sizes).
  nlohmann::json parse_sorted(std::string_view text) const;

  [[noreturn]] void fail(std::string_view where, std::string_view what) const;
  // `object` must be an object whose keys are all in `allowed`.
  void only_keys(const json& object, std::string_view where,
                 std::initializer_list<std::string_view> allowed) const;
  // object[key] as a string or number; without a fallback, a missing key is a failure.
  std::string text(const json& object, std::string_view where, const char* key,
                   std::optional<std::string> fallback = std::nullopt) const;
  double number(const json& object, std::string_view where, const char* key,
                std::optional<double> fallback = std::nullopt) const;

 private:
  std::string file_;
};

}  // namespace blaster
