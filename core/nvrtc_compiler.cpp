#include "core/nvrtc_compiler.hpp"

#include <nvrtc.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "core/error.hpp"
#include "core/utf8.hpp"
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
    std::vector<std::string> found;
    for (const auto& dir : cuda_include_dirs()) found.push_back("-I" + dir.string());
    return found;
  }();
  return options;
}

// RAII for one nvrtcProgram. The headers are NVRTC's in-memory include files: it looks them up
// by name before any search path.
class program {
 public:
  program(const std::string& source, const std::string& name,
          const std::vector<header_file>& headers) {
    std::vector<const char*> contents;
    std::vector<const char*> names;
    for (const auto& h : headers) {
      contents.push_back(h.content.c_str());
      names.push_back(h.name.c_str());
    }
    check_nvrtc(nvrtcCreateProgram(&handle_, source.c_str(), name.c_str(),
                                   static_cast<int>(headers.size()), contents.data(), names.data()),
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

const std::vector<std::filesystem::path>& cuda_include_dirs() {
  static const std::vector<std::filesystem::path> dirs = [] {
    std::vector<std::filesystem::path> candidates;
    std::error_code ignored;
    for (const char* variable : {"CUDA_HOME", "CUDA_PATH"}) {
      if (const char* value = std::getenv(variable); value != nullptr && *value != '\0') {
        const std::filesystem::path include = std::filesystem::path(value) / "include";
        // A toolkit the user named is the one meant; compiling against another would be silent.
        if (!std::filesystem::exists(include / "cuda_fp16.h", ignored)) {
          BLASTER_INPUT_ERROR(
              "{}={}: no CUDA toolkit there ({} is missing); point {} at the toolkit's folder "
              "(the one holding include/) or unset it",
              variable, value, (include / "cuda_fp16.h").string(), variable);
        }
        candidates.emplace_back(include);
      }
    }
    candidates.emplace_back(BLASTER_CUDA_INCLUDE_DIR);
    candidates.emplace_back("/usr/local/cuda/include");
    for (const auto& candidate : candidates) {
      if (!std::filesystem::exists(candidate / "cuda_fp16.h", ignored)) continue;
      std::vector<std::filesystem::path> found = {candidate};
      // CUDA 13 keeps libcu++ (cuda/std/...), which cooperative_groups.h includes, under cccl/.
      if (std::filesystem::is_directory(candidate / "cccl", ignored)) {
        found.push_back(candidate / "cccl");
      }
      return found;
    }
    return std::vector<std::filesystem::path>();
  }();
  return dirs;
}

std::string bounded_log(std::string_view log) {
  std::string valid;
  valid.reserve(log.size());
  for (std::size_t i = 0; i < log.size();) {
    const std::size_t length = utf8_sequence_length(log, i);
    if (length == 0) {
      valid += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      ++i;
    } else {
      valid.append(log.substr(i, length));
      i += length;
    }
  }
  if (valid.size() <= max_log_bytes) return valid;
  // Cut at line ends where there are any, else at a character's first byte.
  const auto starts_character = [&](std::size_t at) {
    return at >= valid.size() || (static_cast<unsigned char>(valid[at]) & 0xC0) != 0x80;
  };
  constexpr std::size_t note_room = 200;
  constexpr std::size_t tail_bytes = 16 * 1024;
  std::size_t head_end = max_log_bytes - tail_bytes - note_room;
  if (const auto nl = valid.rfind('\n', head_end - 1); nl != std::string::npos && nl > 0) {
    head_end = nl + 1;
  }
  while (!starts_character(head_end)) --head_end;
  std::size_t tail_begin = valid.size() - tail_bytes;
  if (const auto nl = valid.find('\n', tail_begin); nl != std::string::npos) tail_begin = nl + 1;
  while (!starts_character(tail_begin)) ++tail_begin;
  return fmt::format("{}[blaster: {} bytes of the log cut here; blaster keeps at most {} KiB]\n{}",
                     valid.substr(0, head_end), tail_begin - head_end, max_log_bytes / 1024,
                     valid.substr(tail_begin));
}

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
  field("blaster-compile-v2");
  field(nvrtc_version());
  field(request.arch);
  // NVRTC writes the file name into the log, the PTX and the cubin.
  field(request.file_name);
  for (const auto& option : nvrtc_options(request)) field(option);
  field("names");
  for (const auto& name : request.name_expressions) field(name);
  field("source");
  field(request.source);
  // The headers NVRTC reads from memory are part of the source.
  field("headers");
  for (const auto& header : request.headers) {
    field(header.name);
    field(header.content);
  }
  return hasher.finish_hex();
}

std::string sources_sha256(const compile_request& request) {
  sha256_hasher hasher;
  auto field = [&](std::string_view value) {
    hasher.update(fmt::format("{}:", value.size()));
    hasher.update(value);
  };
  field("blaster-sources-v1");
  field(request.source);
  for (const auto& header : request.headers) {
    field(header.name);
    field(header.content);
  }
  return hasher.finish_hex();
}

compile_output compile(const compile_request& request) {
  const auto started = std::chrono::steady_clock::now();
  compile_output out;
  out.options = nvrtc_options(request);
  out.key = compile_key(request);
  out.sources_sha256 = sources_sha256(request);
  for (const auto& header : request.headers) {
    out.header_sha256[header.name] = sha256_hex(header.content);
  }

  program prog(request.source, request.file_name, request.headers);
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
  out.log = bounded_log(out.log);
  out.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  return out;
}

}  // namespace blaster
