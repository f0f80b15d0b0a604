#pragma once

#include <string_view>

namespace blaster {

// The git commit blaster was built from, "+dirty" when tracked files differed from it, or
// "unknown" when built outside a git checkout. Runs record it, so that a number can be traced
// to the harness that measured it.
std::string_view source_revision();

}  // namespace blaster
