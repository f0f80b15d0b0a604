#pragma once

#include <map>
#include <string>
#include <vector>

namespace blaster {

// One translation unit for NVRTC. The harness adds its standard options (architecture, C++
// standard, include path, verbose ptxas) to what the request names.
struct compile_request {
  std::string source;
  std::string file_name;  // as NVRTC prints it in the log
  std::string arch = "sm_90a";
  std::vector<std::string> defines;           // "VEC=4" becomes -DVEC=4
  std::vector<std::string> name_expressions;  // kernels to look up, e.g. "rows<4>"
};

struct compile_output {
  bool ok = false;
  std::string log;    // NVRTC's log, ptxas resource lines included
  std::string cubin;  // machine code for request.arch
  std::string ptx;
  std::map<std::string, std::string> lowered_names;  // name expression -> mangled name
  std::vector<std::string> options;                  // every option NVRTC was given
  std::string key;                                   // SHA-256 of what determines the output
  double compile_ms = 0.0;                           // [milliseconds] wall time, cache lookups too
  bool cache_hit = false;
};

// "13.0"
std::string nvrtc_version();

// Every option NVRTC receives for the request, in order.
std::vector<std::string> nvrtc_options(const compile_request& request);

// SHA-256 over the NVRTC version, architecture, file name, options, name expressions and
// source: two requests with one key produce the same cubin and log.
std::string compile_key(const compile_request& request);

// Compiles without any cache. A source that does not compile is not an exception: ok is false
// and the log says why.
compile_output compile(const compile_request& request);

}  // namespace blaster
