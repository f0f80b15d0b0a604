#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

#include "optimize/attempt.hpp"

namespace blaster::cli {

// A judged step's compile log as `eval` and `optimize` print it under the step's line: NVRTC's
// log of a candidate that did not compile, each line indented, at most `lines` of them; empty
// where there is none, its control characters escaped (a proposer's source is quoted there). The
// whole log is in --json and in the store.
std::string log_lines(const attempt& a, std::size_t lines = 20);

// The step with its message and compile log naming `file`, the user's candidate, where they name
// the copy of it that the judging session compiled (candidate-<digest>.cu in the run's folder).
attempt naming_file(attempt a, const std::filesystem::path& file);

}  // namespace blaster::cli
