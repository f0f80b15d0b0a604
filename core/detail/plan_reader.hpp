#pragma once

#include <string_view>

#include "core/launch_plan.hpp"

namespace blaster::detail {

// The characters of a C++ identifier, in param names, scratch names and kernel names.
inline bool is_identifier_start(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
inline bool is_identifier_char(char c) { return is_identifier_start(c) || (c >= '0' && c <= '9'); }

// The plan of a candidate's source, read and checked as parse_launch_plan says.
launch_plan read_launch_plan(std::string_view source, std::string_view file);

// The plan whose JSON is source[json_begin, json_end), read and checked in the dialect's rules
// (parse_launch_plan_json); positions count from the start of `source`.
launch_plan read_launch_plan_json(std::string_view source, std::string_view file,
                                  std::size_t json_begin, std::size_t json_end,
                                  plan_dialect dialect);

}  // namespace blaster::detail
