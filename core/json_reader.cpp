#include "core/json_reader.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"

namespace blaster {

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
