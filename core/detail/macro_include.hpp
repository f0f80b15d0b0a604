#pragma once

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace blaster::detail {

// The includes whose header name is built by macros (thrust's "#include
// __THRUST_DEVICE_SYSTEM_TAG_HEADER") that a toolkit header reaches through the headers it
// includes, and what those names are made of.
struct macro_named_includes {
  // The first header found that holds one; nothing where the header reaches none.
  std::optional<std::filesystem::path> header;
  // Every identifier such a name is built from: the tokens after each such #include, and, closed
  // over every #define the reached headers hold for any of them (whatever #if surrounds it), the
  // tokens of their replacement lists. Left to the toolkit, these expand to the toolkit's own
  // names ("thrust/system/cuda/detail/execution_policy.h"); a candidate that defines or undefines
  // one of them ("detail", say) makes the include name any file.
  std::set<std::string> identifiers;
};

// The walk follows every include it sees, whatever #if surrounds it, resolving quoted names next
// to the including header first as NVRTC does; names it cannot resolve lead nowhere. Each
// header's answer is kept for the life of the process.
const macro_named_includes& macro_named_includes_of(
    const std::filesystem::path& header, const std::vector<std::filesystem::path>& toolkit);

}  // namespace blaster::detail
