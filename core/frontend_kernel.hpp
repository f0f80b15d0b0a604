#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dtype.hpp"

namespace blaster {

// The language a candidate is written in, which decides the frontend that compiles it.
enum class candidate_kind {
  cuda,    // .cu, NVRTC
  triton,  // .py with @triton.jit functions, the machine's python3 and triton
  ptx,     // .ptx with NAME.plan.json beside it, loaded as it is (the driver JITs it)
  cubin,   // .cubin with NAME.plan.json beside it, loaded as it is
};

std::string_view to_string(candidate_kind kind);

// One argument a plan passes, as a frontend that types its kernels from the call (Triton) needs
// it: a pointer to elements of `type`, or a scalar of `type`.
struct kernel_argument {
  bool pointer = false;
  dtype type = dtype::i32;
  friend bool operator==(const kernel_argument&, const kernel_argument&) = default;
};

// One parameter of a compiled kernel: its size and, where known, its kind ('f' floating point,
// 'u' or 's' integer, 'b' bits or an aggregate), as PTX declares it.
struct kernel_parameter {
  std::size_t bytes = 0;
  char kind = 'b';
};

// A device buffer the compiler asks the launcher for, passed as a pointer after the plan's
// arguments: Triton's global scratch, say. Its bytes are per block of the grid; a size of 0 is
// passed as a null pointer, as the compiler's own launcher does.
struct compiler_scratch {
  std::string name;              // "global_scratch"
  std::uint64_t block_bytes = 0;  // [bytes] per block
  std::uint64_t align = 1;       // [bytes]
};

// What a frontend other than NVRTC knows of one kernel beyond its image: the full parameter list
// (the plan's arguments, then the compiler's scratch pointers), the block it was compiled for,
// the dynamic shared memory it must be launched with and the scratch it asks for. NVRTC's kernels
// have none of this: their plan says it, and their PTX gives the parameters.
struct frontend_kernel {
  std::vector<kernel_parameter> parameters;
  std::optional<std::array<unsigned, 3>> block;  // none: the plan's
  unsigned shared_bytes = 0;                     // [bytes] added to the plan's
  std::vector<compiler_scratch> scratch;
};

nlohmann::json to_json(const frontend_kernel& k);
frontend_kernel frontend_kernel_from_json(const nlohmann::json& j);

}  // namespace blaster
