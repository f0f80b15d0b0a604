#include "core/cuda_tools.hpp"

#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace blaster {

std::optional<std::filesystem::path> find_cuda_tool(std::string_view name) {
  const std::string tool(name);
  std::vector<std::filesystem::path> candidates;
  auto under = [&](const std::filesystem::path& root) {
    candidates.push_back(root / "bin" / tool);
    candidates.push_back(root / tool / tool);  // compute-sanitizer/compute-sanitizer
  };
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* value = std::getenv(variable); value != nullptr && *value != '\0') {
      under(value);
    }
  }
  under("/usr/local/cuda");
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    std::stringstream folders(path);
    for (std::string folder; std::getline(folders, folder, ':');) {
      if (!folder.empty()) candidates.push_back(std::filesystem::path(folder) / tool);
    }
  }
  for (const auto& c : candidates) {
    if (::access(c.c_str(), X_OK) == 0) return c;
  }
  return std::nullopt;
}

}  // namespace blaster
