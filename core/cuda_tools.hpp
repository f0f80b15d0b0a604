#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

namespace blaster {

// An executable of the CUDA toolkit (compute-sanitizer, ncu) where it is installed: under
// $CUDA_HOME or $CUDA_PATH, /usr/local/cuda, or on PATH, in that order.
std::optional<std::filesystem::path> find_cuda_tool(std::string_view name);

}  // namespace blaster
