#pragma once

// A candidate is judged the same whatever language it was written in: a frontend turns one
// variant into what the worker loads (a cubin or PTX, the entry's name, its full parameter list,
// block size, dynamic shared memory and the scratch its compiler asks for: compile_output and its
// frontend_kernel entries), and nothing after it (gate, guards, timing, store, bundles) knows the
// language. One frontend per candidate_kind: NVRTC for .cu, Triton for .py, and precompiled
// .ptx/.cubin images with their plan beside them.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/compile_sandbox.hpp"
#include "core/frontend_kernel.hpp"
#include "core/launch_plan.hpp"
#include "core/nvrtc_compiler.hpp"

namespace blaster {

// What a frontend reads a candidate file with.
struct frontend_context {
  compile_limits limits;
  std::filesystem::path common_headers;  // kernels/common/; empty: no shared header may be used
};

// A candidate's plan and the files its variants compile from besides its own bytes, by name and
// content: the headers a .cu includes, the plan beside a precompiled image, the function a Triton
// plan takes from another file. They enter the sources digest and the CAS as the file does.
struct frontend_plan {
  launch_plan plan;
  std::vector<header_file> companions;
  // Why the file cannot compile whatever its plan says ("file:line:col: ..." where it can point):
  // an include the policy refuses, no interpreter for a Triton file. Empty when it may compile.
  std::string compile_error;
};

// One variant of a candidate, as a frontend turns it into a compile_request.
struct variant_input {
  const std::filesystem::path& file;
  std::string_view source;
  const frontend_plan& plan;
  const std::map<std::string, std::string>& params;
  const std::vector<std::string>& kernels;  // per launch step, params substituted
  const std::string& arch;                  // "sm_90a"
  // Per launch step, the types of the arguments the plan passes, from the task; a frontend that
  // types its kernels from the call (Triton) needs them, others ignore them. Empty: unknown.
  const std::vector<std::vector<kernel_argument>>& arguments;
  const compile_limits& limits;
};

class candidate_frontend {
 public:
  virtual ~candidate_frontend() = default;

  [[nodiscard]] virtual candidate_kind kind() const = 0;

  // The plan, from where this kind keeps it, and the companions. A bad plan is an input_error
  // "file:line:col: ..." pointing into the file that holds it.
  [[nodiscard]] virtual frontend_plan read_plan(const std::filesystem::path& file,
                                                std::string_view source,
                                                const frontend_context& context) const = 0;

  // The request that compiles one variant.
  [[nodiscard]] virtual compile_request request(const variant_input& variant) const = 0;

  // Why no file of this kind can compile on this machine under `limits` (Triton: the
  // interpreter has no triton), naming the flag that changes it; empty where files of it can. A
  // scan of a task's folder leaves such files out (discover_candidates); a file named on its
  // own still compiles to the compile_error that says the same.
  [[nodiscard]] virtual std::string unavailable(const compile_limits& /*limits*/) const {
    return {};
  }

  // SHA-256 of what determines the output: two requests with one key compile alike.
  [[nodiscard]] virtual std::string key(const compile_request& request) const = 0;

  // Compiles one variant: where that runs a compiler or the candidate's own code, in the compile
  // sandbox under the limits. A refusal or a compile error is in the output (ok false, refusal,
  // log), never thrown; blaster::error only when no sandbox can be started.
  [[nodiscard]] virtual compile_output compile(const compile_request& request,
                                               const compile_limits& limits) const = 0;
};

// The frontend of a kind; each lives as long as the program.
const candidate_frontend& frontend_for(candidate_kind kind);

// By the file's extension: .cu, .py, .ptx, .cubin; none for any other file.
std::optional<candidate_kind> candidate_kind_of(const std::filesystem::path& file);

// The plan beside a precompiled image: NAME.plan.json for NAME.ptx or NAME.cubin.
std::filesystem::path precompiled_plan_path(const std::filesystem::path& image);

}  // namespace blaster
