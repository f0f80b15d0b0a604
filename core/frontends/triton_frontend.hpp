#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/candidate_frontend.hpp"

namespace blaster {

// .py candidates: @triton.jit functions and their plan, the JSON of a /* blaster */ comment in
// the module docstring ("""blaster {...}""") or in a top-level BLASTER_PLAN = """{...}""" string
// (read as written, as a raw string). Its steps name one @triton.jit function and leave out
// block and shared_bytes (Triton decides them); "args" are the function's arguments other than
// its tl.constexpr ones, in order; "params" give the constexprs by name, and num_warps and
// num_stages. A plan may take its kernel from another file: "source": "PATH::function" (PATH
// relative to the candidate's folder) extracts that function with its decorators, the
// @triton.jit functions and literal constants it uses, and the file's triton imports, by an ast
// walk that never runs the file; the extracted module is the companion that compiles.
//
// Each variant compiles in the compile sandbox's child, which confines itself (Landlock: read
// access to the interpreter's folders and the system's libraries only, write access to its own
// folder; no new sockets) and runs the machine's python3 with our driver (triton_driver.py) on
// it, under the compile deadline and memory cap, with a scrubbed environment. Where the
// interpreter has no triton the variant is a compile_error that says so and names --python.
class triton_frontend final : public candidate_frontend {
 public:
  [[nodiscard]] candidate_kind kind() const override { return candidate_kind::triton; }
  [[nodiscard]] frontend_plan read_plan(const std::filesystem::path& file, std::string_view source,
                                        const frontend_context& context) const override;
  [[nodiscard]] std::string unavailable(const compile_limits& limits) const override;
  [[nodiscard]] compile_request request(const variant_input& variant) const override;
  [[nodiscard]] std::string key(const compile_request& request) const override;
  [[nodiscard]] compile_output compile(const compile_request& request,
                                       const compile_limits& limits) const override;
};

// The plan of a Triton file; input_error "file:line:col: ..." as parse_launch_plan's.
launch_plan parse_triton_plan(std::string_view source, std::string_view file_name);

// What the probe found of an interpreter: `error` says why it cannot compile Triton (none on
// PATH, no triton module), else the interpreter's real path, triton's version and the folders
// it reads. Probed once per name and process.
struct triton_interpreter {
  std::string name;  // as asked: "python3", or the --python path
  std::string executable;
  std::string version;
  std::vector<std::string> readable;
  std::string error;
};
const triton_interpreter& find_triton(const std::string& python, const compile_limits& limits);

// The module text of `function` taken from `file` (see triton_frontend); an input_error that
// names the file says why not (no such file or function, not @triton.jit, not Python).
std::string extract_triton_function(const std::filesystem::path& file, const std::string& function,
                                    const compile_limits& limits);

// triton_driver.py, built into the binary.
std::string_view triton_driver_text();

// The compile sandbox child's side of a Triton variant: confines itself and runs the driver.
compile_output compile_triton_in_child(const compile_request& request,
                                       const std::filesystem::path& dir);

}  // namespace blaster
