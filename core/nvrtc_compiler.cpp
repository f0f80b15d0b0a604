#include "core/nvrtc_compiler.hpp"

#include <nvrtc.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "core/error.hpp"
#include "core/sha256.hpp"

#ifndef BLASTER_CUDA_INCLUDE_DIR
#define BLASTER_CUDA_INCLUDE_DIR "/usr/local/cuda/include"
#endif

namespace blaster {
namespace {

void check_nvrtc(nvrtcResult status, const char* what) {
  if (status != NVRTC_SUCCESS) BLASTER_THROW("{}: {}", what, nvrtcGetErrorString(status));
}

// "-I" options for where cuda_fp16.h and friends live; NVRTC has no default search path for
// them. Found once: every compile and every compile key asks.
const std::vector<std::string>& cuda_include_options() {
  static const std::vector<std::string> options = [] {
    std::vector<std::filesystem::path> candidates;
    for (const char* variable : {"CUDA_HOME", "CUDA_PATH"}) {
      if (const char* value = std::getenv(variable); value != nullptr && *value != '\0') {
        candidates.emplace_back(std::filesystem::path(value) / "include");
      }
    }
    candidates.emplace_back(BLASTER_CUDA_INCLUDE_DIR);
    candidates.emplace_back("/usr/local/cuda/include");
    std::error_code ignored;
    for (const auto& candidate : candidates) {
      if (!std::filesystem::exists(candidate / "cuda_fp16.h", ignored)) continue;
      std::vector<std::string> found = {"-I" + candidate.string()};
      // CUDA 13 keeps libcu++ (cuda/std/...), which cooperative_groups.h includes, under cccl/.
      if (std::filesystem::is_directory(candidate / "cccl", ignored)) {
        found.push_back("-I" + (candidate / "cccl").string());
      }
      return found;
    }
    return std::vector<std::string>();
  }();
  return options;
}

// RAII for one nvrtcProgram.
class program {
 public:
  program(const std::string& source, const std::string& name) {
    check_nvrtc(nvrtcCreateProgram(&handle_, source.c_str(), name.c_str(), 0, nullptr, nullptr),
                "nvrtcCreateProgram");
  }
  ~program() { nvrtcDestroyProgram(&handle_); }
  program(const program&) = delete;
  program& operator=(const program&) = delete;
  [[nodiscard]] nvrtcProgram get() const noexcept { return handle_; }

 private:
  nvrtcProgram handle_ = nullptr;
};

template <class SizeFn, class GetFn>
std::string read_output(nvrtcProgram p, SizeFn size_fn, GetFn get_fn, const char* what) {
  std::size_t size = 0;
  check_nvrtc(size_fn(p, &size), what);
  std::string out(size, '\0');
  if (size > 0) check_nvrtc(get_fn(p, out.data()), what);
  return out;
}

}  // namespace

std::string nvrtc_version() {
  int major = 0;
  int minor = 0;
  check_nvrtc(nvrtcVersion(&major, &minor), "nvrtcVersion");
  return fmt::format("{}.{}", major, minor);
}

std::vector<std::string> nvrtc_options(const compile_request& request) {
  std::vector<std::string> options = {
      "--gpu-architecture=" + request.arch,
      "-std=c++17",
      // ptxas prints registers, stack, spills and shared memory per kernel into the log.
      "--ptxas-options=--verbose",
      // Line tables cost nothing at run time and let sanitizers name the source line.
      "-lineinfo",
  };
  const auto& includes = cuda_include_options();
  options.insert(options.end(), includes.begin(), includes.end());
  for (const auto& define : request.defines) options.push_back("-D" + define);
  return options;
}

std::string compile_key(const compile_request& request) {
  sha256_hasher hasher;
  auto field = [&](std::string_view value) {
    hasher.update(fmt::format("{}:", value.size()));
    hasher.update(value);
  };
  field("blaster-compile-v1");
  field(nvrtc_version());
  field(request.arch);
  // NVRTC writes the file name into the log, the PTX and the cubin.
  field(request.file_name);
  for (const auto& option : nvrtc_options(request)) field(option);
  field("names");
  for (const auto& name : request.name_expressions) field(name);
  field("source");
  field(request.source);
  return hasher.finish_hex();
}

compile_output compile(const compile_request& request) {
  const auto started = std::chrono::steady_clock::now();
  compile_output out;
  out.options = nvrtc_options(request);
  out.key = compile_key(request);

  program prog(request.source, request.file_name);
  for (const auto& name : request.name_expressions) {
    check_nvrtc(nvrtcAddNameExpression(prog.get(), name.c_str()), "nvrtcAddNameExpression");
  }
  std::vector<const char*> argv;
  argv.reserve(out.options.size());
  for (const auto& option : out.options) argv.push_back(option.c_str());
  const nvrtcResult status =
      nvrtcCompileProgram(prog.get(), static_cast<int>(argv.size()), argv.data());
  out.log = read_output(prog.get(), nvrtcGetProgramLogSize, nvrtcGetProgramLog, "program log");
  // The log ends in a NUL that NVRTC counts in its size.
  while (!out.log.empty() && out.log.back() == '\0') out.log.pop_back();
  if (status == NVRTC_SUCCESS) {
    out.cubin = read_output(prog.get(), nvrtcGetCUBINSize, nvrtcGetCUBIN, "nvrtcGetCUBIN");
    out.ptx = read_output(prog.get(), nvrtcGetPTXSize, nvrtcGetPTX, "nvrtcGetPTX");
    while (!out.ptx.empty() && out.ptx.back() == '\0') out.ptx.pop_back();
    out.ok = true;
    for (const auto& name : request.name_expressions) {
      const char* lowered = nullptr;
      if (nvrtcGetLoweredName(prog.get(), name.c_str(), &lowered) != NVRTC_SUCCESS ||
          lowered == nullptr) {
        out.ok = false;
        out.log += fmt::format(
            "\nblaster: the kernel '{}' named by the launch plan is not "
            "defined in {} (or is not __global__)\n",
            name, request.file_name);
        continue;
      }
      out.lowered_names[name] = lowered;
    }
    if (!out.ok) out.cubin.clear();
  }
  out.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  return out;
}

}  // namespace blaster
