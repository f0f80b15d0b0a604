#pragma once

#include <filesystem>
#include <optional>
#include <vector>

namespace blaster::detail {

// Whether a toolkit header reaches, through the headers it includes, an include whose header
// name is built by macros (thrust's "#include __THRUST_DEVICE_SYSTEM_TAG_HEADER"): a candidate
// that defines one of the identifiers in that name (even "detail") makes it name any file. The
// walk follows every include it sees, whatever #if surrounds it, resolving quoted names next to
// the including header first as NVRTC does; names it cannot resolve lead nowhere. Returns the
// first such header, or nothing. Each header's answer is kept for the life of the process.
std::optional<std::filesystem::path> reaches_macro_include(
    const std::filesystem::path& header, const std::vector<std::filesystem::path>& toolkit);

}  // namespace blaster::detail
