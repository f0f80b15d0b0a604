#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/nvrtc_compiler.hpp"

namespace blaster {

// Where the headers a candidate may include come from.
struct include_roots {
  // The toolkit's include folders in NVRTC's search order (cuda_include_dirs()): <name> must
  // be a regular file under one of them.
  std::vector<std::filesystem::path> toolkit;
  // The shared header "common/NAME" -> its bytes, or nullopt where there is none.
  std::function<std::optional<std::string>(std::string_view name)> common;
};

// The shared headers of a kernels/common/ folder on disk: "common/NAME" is the regular file
// folder/NAME, and nothing that a symbolic link leads out of the folder to. An empty folder path
// has no headers.
std::function<std::optional<std::string>(std::string_view name)> common_headers_in(
    std::filesystem::path folder);

// The include policy, checked before NVRTC sees a source: a candidate may include only the CUDA
// toolkit's headers by name (#include <cuda_fp16.h>, <cuda/std/cstdint>, <cub/cub.cuh>) and the
// project's shared headers as #include "common/NAME.cuh", and a common header is held to the
// same rule. Some toolkit headers (thrust's, and the parts of CUB that reach them) name headers by
// macros; those are allowed as long as neither the candidate, its common headers nor its
// `defines` (NVRTC's -D NAME=VALUE, from the plan's params) define or undefine any identifier the
// names are built from, so that every such name stays one the toolkit chose.
// Everything else is refused: absolute paths, ".." components, other quoted includes (NVRTC
// would search its working folder), names the toolkit lacks, macro-form includes, #include_next,
// #import, #embed, and __has_include of anything outside the set, in every spelling the
// preprocessor accepts (line splices, comments around the '#', the %: digraph, leading
// whitespace). The scan errs on the side of refusing: it reads every line as if it could be a
// directive, inside comments and raw strings too, so that no guess about what NVRTC skips can
// let a directive through.
//
// Returns the common headers the source reaches, each once, in name order; a violation is an
// input_error "file:line:col: what is wrong; what is allowed".
std::vector<header_file> resolve_includes(std::string_view source, std::string_view file_name,
                                          const include_roots& roots,
                                          std::span<const std::string> defines = {});

// Name expressions and -D defines reach NVRTC's preprocessor beside the source: one with a
// control character (a new-line above all) could start a directive there. Returns why the
// request is refused (one sentence, no file name), or an empty string.
std::string check_preprocessor_inputs(const compile_request& request);

}  // namespace blaster
