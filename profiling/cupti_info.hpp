#pragma once

#include <string>

namespace blaster {

// The CUPTI API version the process loaded, e.g. "130000"; CUPTI needs no GPU to answer.
std::string cupti_version();

}  // namespace blaster
