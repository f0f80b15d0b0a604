#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/include_policy.hpp"

namespace blaster::detail {

inline constexpr std::string_view common_prefix = "common/";

// Whether path lies inside folder, both already canonical.
bool is_within(const std::filesystem::path& path, const std::filesystem::path& folder);

// The scan behind resolve_includes: the source and every common header it reaches, checked
// against the include policy; returns those headers in name order.
std::vector<header_file> scan_includes(std::string_view source, std::string_view file_name,
                                       const include_roots& roots,
                                       std::span<const std::string> defines);

}  // namespace blaster::detail
