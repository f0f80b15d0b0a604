#include "core/compile_sandbox.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <semaphore>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/candidate_frontend.hpp"
#include "core/error.hpp"
#include "core/file_confinement.hpp"
#include "core/file_io.hpp"
#include "core/frontends/triton_frontend.hpp"
#include "core/include_policy.hpp"
#include "core/private_folder.hpp"
#include "core/sha256.hpp"
#include "core/worker_process.hpp"

namespace blaster {
namespace {

using json = nlohmann::json;

// Bytes travel as CBOR byte strings: a source, a file name or a log need not be UTF-8.
json bytes(std::string_view s) {
  return json::binary(std::vector<std::uint8_t>(s.begin(), s.end()));
}
std::string text(const json& j) {
  const auto& b = j.get_binary();
  return std::string(b.begin(), b.end());
}

std::string request_cbor(const compile_request& r) {
  json headers = json::array();
  for (const auto& h : r.headers)
    headers.push_back({{"name", h.name}, {"content", bytes(h.content)}});
  json arguments = json::array();
  for (const auto& a : r.triton.arguments) {
    arguments.push_back({{"pointer", a.pointer}, {"type", name_of(a.type)}});
  }
  const json triton = {{"python", r.triton.python},
                       {"function", r.triton.function},
                       {"arguments", arguments},
                       {"constexprs", r.triton.constexprs},
                       {"num_warps", r.triton.num_warps},
                       {"num_stages", r.triton.num_stages},
                       {"interpreter", r.triton.interpreter},
                       {"version", r.triton.version},
                       {"readable", r.triton.readable}};
  const json j = {{"kind", to_string(r.kind)},
                  {"source", bytes(r.source)},
                  {"file_name", bytes(r.file_name)},
                  {"arch", r.arch},
                  {"defines", r.defines},
                  {"name_expressions", r.name_expressions},
                  {"headers", headers},
                  {"triton", triton}};
  const std::vector<std::uint8_t> out = json::to_cbor(j);
  return std::string(out.begin(), out.end());
}

compile_request request_from_cbor(const std::string& cbor) {
  const json j = json::from_cbor(cbor);
  compile_request r;
  r.source = text(j.at("source"));
  r.file_name = text(j.at("file_name"));
  r.arch = j.at("arch").get<std::string>();
  r.defines = j.at("defines").get<std::vector<std::string>>();
  r.name_expressions = j.at("name_expressions").get<std::vector<std::string>>();
  for (const auto& h : j.at("headers")) {
    r.headers.push_back({h.at("name").get<std::string>(), text(h.at("content"))});
  }
  for (const candidate_kind kind : {candidate_kind::cuda, candidate_kind::triton,
                                    candidate_kind::ptx, candidate_kind::cubin}) {
    if (j.at("kind").get<std::string>() == to_string(kind)) r.kind = kind;
  }
  const json& t = j.at("triton");
  r.triton.python = t.at("python").get<std::string>();
  r.triton.function = t.at("function").get<std::string>();
  for (const auto& a : t.at("arguments")) {
    const auto type = parse_dtype(a.at("type").get<std::string>());
    if (!type) BLASTER_THROW("the compile request names an unknown type");
    r.triton.arguments.push_back({a.at("pointer").get<bool>(), *type});
  }
  r.triton.constexprs = t.at("constexprs").get<std::map<std::string, std::string>>();
  r.triton.num_warps = t.at("num_warps").get<int>();
  r.triton.num_stages = t.at("num_stages").get<int>();
  r.triton.interpreter = t.at("interpreter").get<std::string>();
  r.triton.version = t.at("version").get<std::string>();
  r.triton.readable = t.at("readable").get<std::vector<std::string>>();
  return r;
}

std::string output_cbor(const compile_output& o) {
  json kernels = json::object();
  for (const auto& [name, k] : o.kernels) kernels[name] = to_json(k);
  const json j = {{"ok", o.ok},
                  {"kernels", kernels},
                  {"log", bytes(o.log)},
                  {"cubin", bytes(o.cubin)},
                  {"ptx", bytes(o.ptx)},
                  {"lowered_names", o.lowered_names},
                  {"refusal", o.refusal}};
  const std::vector<std::uint8_t> out = json::to_cbor(j);
  return std::string(out.begin(), out.end());
}

// Only what NVRTC produced; the parent knows the rest from the request.
void read_output_cbor(const std::string& cbor, compile_output& o) {
  const json j = json::from_cbor(cbor);
  o.ok = j.at("ok").get<bool>();
  o.log = bounded_log(text(j.at("log")));
  o.cubin = text(j.at("cubin"));
  o.ptx = text(j.at("ptx"));
  o.lowered_names = j.at("lowered_names").get<std::map<std::string, std::string>>();
  o.refusal = j.at("refusal").get<std::string>();
  for (const auto& [name, k] : j.at("kernels").items()) {
    o.kernels[name] = frontend_kernel_from_json(k);
  }
}

// At most one compiling child per hardware thread, whatever thread asks: files and their
// variants compile side by side, more children than cores would only share the cores, and each
// may hold up to the memory cap.
class compile_slot {
 public:
  compile_slot() { slots().acquire(); }
  ~compile_slot() { slots().release(); }
  compile_slot(const compile_slot&) = delete;
  compile_slot& operator=(const compile_slot&) = delete;

 private:
  static std::counting_semaphore<>& slots() {
    static std::counting_semaphore<> semaphore(
        static_cast<std::ptrdiff_t>(std::max(1U, std::thread::hardware_concurrency())));
    return semaphore;
  }
};

// NVRTC looks for quoted includes in its working folder, and writes the folder's path into the
// PTX and the cubin (.file, the line table). So the child works in an empty folder that only
// this user may enter, at a path that stays the same from one compile to the next: one source,
// one cubin. A folder at that path that is not such a folder (another user's, or not empty) is
// not used; `fallback` is, at the cost of that sameness.
std::filesystem::path empty_working_folder(const std::filesystem::path& fallback) {
  const std::filesystem::path folder =
      std::filesystem::temp_directory_path() / fmt::format("blaster-nvrtc-{}", ::geteuid());
  ::mkdir(folder.c_str(), 0700);  // it may exist: checked below either way
  struct stat info {};
  std::error_code ec;
  if (::lstat(folder.c_str(), &info) == 0 && S_ISDIR(info.st_mode) && info.st_uid == ::geteuid() &&
      (info.st_mode & 077) == 0 && std::filesystem::is_empty(folder, ec) && !ec) {
    return folder;
  }
  std::filesystem::create_directory(fallback);
  return fallback;
}

std::filesystem::path executable_of(const compile_limits& limits) {
  return limits.executable.empty() ? this_executable() : limits.executable;
}

std::string mib(std::uint64_t bytes) { return fmt::format("{:.0f} MiB", bytes / 1048576.0); }
std::string gib(std::uint64_t bytes) { return fmt::format("{:g} GiB", bytes / 1073741824.0); }

constexpr std::string_view child_prefix = "blaster __compile: ";

// The last 4 KiB the child wrote to its standard error. Only blaster's own lines from it are
// ever shown; the rest is read to tell whether the compiler ran out of memory, never kept.
std::string stderr_tail(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return {};
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(std::max<std::streamoff>(0, size - 4096));
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

bool says_out_of_memory(const std::filesystem::path& file) {
  const std::string tail = stderr_tail(file);
  for (const char* sign : {"out of memory", "bad_alloc", "Cannot allocate memory"}) {
    if (tail.find(sign) != std::string::npos) return true;
  }
  return false;
}

// The last line the child's own code wrote, without its prefix; empty when there is none.
std::string last_own_line(const std::filesystem::path& file) {
  const std::string tail = stderr_tail(file);
  const std::size_t at = tail.rfind(child_prefix);
  if (at == std::string::npos) return {};
  const std::size_t begin = at + child_prefix.size();
  return bounded_log(tail.substr(begin, tail.find('\n', begin) - begin));
}

// NVRTC's front end reports an allocation that failed as a catastrophic error of its own.
bool log_says_out_of_memory(const std::string& log) {
  return log.find("catastrophic error: out of memory") != std::string::npos;
}

void refuse(compile_output& out, std::string why) {
  out.ok = false;
  out.cubin.clear();
  out.ptx.clear();
  out.lowered_names.clear();
  out.log = bounded_log(out.log.empty() ? "blaster: " + why + "\n"
                                        : out.log + "\nblaster: " + why + "\n");
  out.refusal = std::move(why);
}

}  // namespace

compile_output compile_sandboxed(const compile_request& request, const compile_limits& limits) {
  const auto started = std::chrono::steady_clock::now();
  compile_output out;
  const bool nvrtc = request.kind == candidate_kind::cuda;
  // The compiler the messages name.
  const std::string_view compiler = nvrtc ? "NVRTC" : "Triton";
  if (nvrtc) out.options = nvrtc_options(request);
  out.key = frontend_for(request.kind).key(request);
  out.sources_sha256 = sources_sha256(request);
  for (const auto& h : request.headers) out.header_sha256[h.name] = sha256_hex(h.content);
  auto finish = [&]() -> compile_output {
    out.compile_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count();
    return std::move(out);
  };
  if (std::string why = nvrtc ? check_preprocessor_inputs(request) : std::string();
      !why.empty()) {
    refuse(out, std::move(why));
    return finish();
  }
  const std::filesystem::path executable = executable_of(limits);
  if (!std::filesystem::is_regular_file(executable)) {
    BLASTER_THROW("the compile sandbox needs the blaster executable, and {} is not a file",
                  executable.string());
  }

  const compile_slot slot;
  const private_folder dir("blaster-compile");
  const std::filesystem::path working_folder = empty_working_folder(dir.path() / "cwd");
  {
    std::ofstream file(dir.path() / "request.cbor", std::ios::binary);
    file << request_cbor(request);
    if (!file.flush()) BLASTER_THROW("writing {}", (dir.path() / "request.cbor").string());
  }
  const worker_outcome outcome =
      run_worker({executable.string(), "__compile", dir.path().string()}, limits.timeout, {},
                 worker_limits{.address_space_bytes = limits.memory_bytes,
                               .working_directory = working_folder,
                               .environment = {}});
  out.peak_memory_bytes = outcome.peak_rss_bytes;
  if (outcome.how == worker_outcome::ending::not_started) {
    BLASTER_THROW("cannot start the compile sandbox {}: {}", executable.string(), outcome.error);
  }
  if (outcome.how == worker_outcome::ending::timed_out) {
    refuse(out, fmt::format("{} did not finish within the compile deadline of {:g} s and was "
                            "stopped ({}); --compile-timeout SECONDS raises the limit",
                            compiler, limits.timeout.count() / 1000.0,
                            nvrtc ? "templates or constexpr evaluation that grow without bound "
                                    "do this"
                                  : "code that runs at compile time and does not end does this"));
    return finish();
  }
  const std::optional<std::string> result = read_file_if_exists(dir.path() / "result.cbor");
  if (outcome.clean_exit() && result) {
    try {
      read_output_cbor(*result, out);
    } catch (const json::exception& e) {
      BLASTER_THROW("the compile sandbox wrote a result that does not read back: {}", e.what());
    }
    if (!out.ok && out.refusal.empty() && log_says_out_of_memory(out.log)) {
      refuse(out, fmt::format("{} ran out of memory under the compile memory cap of {} (peak "
                              "resident {}); --compile-memory GIB raises the cap",
                              compiler, gib(limits.memory_bytes), mib(out.peak_memory_bytes)));
    }
    return finish();
  }
  if (says_out_of_memory(dir.path() / "stderr.txt")) {
    refuse(out, fmt::format("{} ran out of memory under the compile memory cap of {} and "
                            "ended (peak resident {}); --compile-memory GIB raises the cap",
                            compiler, gib(limits.memory_bytes), mib(out.peak_memory_bytes)));
  } else if (outcome.how == worker_outcome::ending::exited && outcome.exit_code == 127) {
    refuse(out, fmt::format("the compiler process could not start under the compile memory cap "
                            "of {}; --compile-memory GIB raises the cap",
                            gib(limits.memory_bytes)));
  } else {
    const std::string said = last_own_line(dir.path() / "stderr.txt");
    refuse(out, fmt::format("the compiler process {} (peak resident {}) before it finished{}",
                            outcome.describe(), mib(out.peak_memory_bytes),
                            said.empty() ? std::string() : ": " + said));
  }
  return finish();
}

int run_compile_child(const std::filesystem::path& dir) {
  // Standard error goes to a file that the parent reads only to tell whether the compiler ran
  // out of memory: LLVM says so there before it aborts.
  const int err =
      ::open((dir / "stderr.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (err >= 0) {
    ::dup2(err, STDERR_FILENO);
    ::close(err);
  }
  try {
    const compile_request request = request_from_cbor(read_file(dir / "request.cbor"));
    compile_output out;
    if (request.kind == candidate_kind::triton) {
      out = compile_triton_in_child(request, dir);
      write_file_atomically(dir / "result.cbor", output_cbor(out), 0600);
      return 0;
    }
    // The parent checked the request; the child trusts no one and checks again.
    std::string why = check_preprocessor_inputs(request);
    if (why.empty()) {
      try {
        const include_roots roots{
            .toolkit = cuda_include_dirs(),
            .common = [&](std::string_view name) -> std::optional<std::string> {
              for (const auto& h : request.headers) {
                if (h.name == name) return h.content;
              }
              return std::nullopt;
            }};
        static_cast<void>(
            resolve_includes(request.source, request.file_name, roots, request.defines));
      } catch (const input_error& e) {
        why = fmt::format("the include policy refused it in the compile sandbox: {}", e.what());
      }
    }
    if (!why.empty()) {
      refuse(out, std::move(why));
    } else {
      // NVRTC loads its builtins library on the first compile; loaded now, it needs no file
      // access later. Without it NVRTC cannot work confined, so the confinement waits for it.
      const std::string builtins = fmt::format("libnvrtc-builtins.so.{}", nvrtc_version());
      if (::dlopen(builtins.c_str(), RTLD_NOW | RTLD_GLOBAL) != nullptr) {
        confine_file_access(cuda_include_dirs(), dir);
      }
      out = compile(request);
    }
    write_file_atomically(dir / "result.cbor", output_cbor(out), 0600);
    return 0;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%sout of memory\n", child_prefix.data());
    return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s%s\n", child_prefix.data(), e.what());
    return 1;
  }
}

}  // namespace blaster
