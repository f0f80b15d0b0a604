#include "profiling/cupti_info.hpp"

#include <cupti.h>

#include <fmt/format.h>

namespace blaster {

std::string cupti_version() {
  uint32_t version = 0;
  if (cuptiGetVersion(&version) != CUPTI_SUCCESS) return "unavailable";
  return fmt::format("{} (headers {})", version, CUPTI_API_VERSION);
}

}  // namespace blaster
