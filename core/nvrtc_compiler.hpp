#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/frontend_kernel.hpp"

namespace blaster {

// A header NVRTC receives in memory (nvrtcCreateProgram's headers), under the name the source
// includes it by, so that NVRTC never opens a project file by path.
struct header_file {
  std::string name;  // "common/block_reduce.cuh"
  std::string content;
};

// What a Triton variant compiles with besides its source (core/frontends/triton_frontend.hpp).
struct triton_options {
  std::string python;    // the interpreter named by --python; empty: python3 on PATH
  std::string function;  // the @triton.jit function the plan launches
  std::vector<kernel_argument> arguments;         // its runtime arguments, in order
  std::map<std::string, std::string> constexprs;  // the params but num_warps and num_stages
  int num_warps = 4;
  int num_stages = 3;
  // Filled by the frontend from its probe of `python` before the sandbox starts: the interpreter
  // itself, triton's version, and the folders the interpreter reads (its prefix, its sys.path).
  std::string interpreter;
  std::string version;
  std::vector<std::string> readable;
};

// One variant for its frontend; for NVRTC one translation unit, to whose options the harness
// adds its standard ones (architecture, C++ standard, include path, verbose ptxas).
struct compile_request {
  candidate_kind kind = candidate_kind::cuda;
  std::string source;
  std::string file_name;  // as NVRTC prints it in the log
  std::string arch = "sm_90a";
  std::vector<std::string> defines;           // "VEC=4" becomes -DVEC=4
  std::vector<std::string> name_expressions;  // kernels to look up, e.g. "rows<4>"
  std::vector<header_file> headers;           // the kernels/common headers it includes
  triton_options triton;                      // kind triton only
};

struct compile_output {
  bool ok = false;
  std::string log;    // NVRTC's log, ptxas resource lines included
  std::string cubin;  // machine code for request.arch
  std::string ptx;
  std::map<std::string, std::string> lowered_names;  // name expression -> mangled name
  std::vector<std::string> options;                  // every option NVRTC was given
  std::string key;                                   // SHA-256 of what determines the output
  // SHA-256 of the source and of every header it includes, by name and content
  // (sources_sha256), and of each header alone: what a result cites besides the file's bytes.
  std::string sources_sha256;
  std::map<std::string, std::string> header_sha256;  // header name -> SHA-256 of its content
  double compile_ms = 0.0;                           // [milliseconds] wall time, cache lookups too
  bool cache_hit = false;
  // Why the compile sandbox stopped NVRTC (the deadline, the memory cap, a crash) or refused the
  // request, as one line naming the limit and the flag that raises it; empty when NVRTC ran to
  // its end. Such an outcome depends on the limits, not only on the source: it is never cached.
  std::string refusal;
  std::uint64_t peak_memory_bytes = 0;  // [bytes] the compiling child's peak resident memory
  // Per name expression, what a frontend other than NVRTC knows of its kernel (frontend_kernel);
  // empty for NVRTC, whose plan and PTX say it.
  std::map<std::string, frontend_kernel> kernels;
  std::string toolchain;  // the compiler besides NVRTC and its version: "triton 3.6.0"
};

// What the worker loads: the cubin, or the PTX where a frontend gave none (the driver compiles
// it as it loads it).
inline const std::string& module_image(const compile_output& output) {
  return output.cubin.empty() ? output.ptx : output.cubin;
}

// [bytes] The most of NVRTC's log that blaster keeps, prints or stores.
inline constexpr std::size_t max_log_bytes = 64 * 1024;

// The log as blaster keeps it: valid UTF-8 (an invalid byte becomes U+FFFD, so that every JSON
// form of it can be written), and at most max_log_bytes: the head and the tail (where ptxas
// reports the kernels' resources) around one line that says how much was cut.
std::string bounded_log(std::string_view log);

// The toolkit's include folders, in the order NVRTC searches them: include/ and, where CUDA 13
// keeps libcu++ (cuda/std/...), include/cccl/. Found once.
const std::vector<std::filesystem::path>& cuda_include_dirs();

// "13.0"
std::string nvrtc_version();

// Every option NVRTC receives for the request, in order.
std::vector<std::string> nvrtc_options(const compile_request& request);

// SHA-256 over the NVRTC version, architecture, file name, options, name expressions, source
// and headers (names and contents): two requests with one key produce the same cubin and log.
std::string compile_key(const compile_request& request);

// SHA-256 over the source and every header, by name and content: what the request compiles.
std::string sources_sha256(const compile_request& request);

// Compiles in this process, without any cache: for the harness's own kernels, and for the
// compile sandbox's child (core/compile_sandbox.hpp), never for a candidate in the parent. A
// source that does not compile is not an exception: ok is false and the log says why.
compile_output compile(const compile_request& request);

}  // namespace blaster
