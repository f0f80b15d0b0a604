#pragma once

#include <map>
#include <string>

namespace blaster {

// [milliseconds] where a worker's wall time went, by its steps ("context", "run", ...);
// "process" is what the worker did not see: starting and ending the process.
using step_profile = std::map<std::string, double>;

}  // namespace blaster
